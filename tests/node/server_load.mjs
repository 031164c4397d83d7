// Many concurrent streaming clients (NIWA_CLIENTS, default 64; NIWA_ROUNDS rounds): every
// stream completes, well-formed and in order.
import { assert, joinChatChunks, model, run, sseEvents } from "./server_common.mjs";

const clients = Number(process.env.NIWA_CLIENTS ?? 64);
const rounds = Number(process.env.NIWA_ROUNDS ?? 1);

async function one(i) {
  const events = await sseEvents("/v1/chat/completions", {
    model,
    messages: [{ role: "user", content: `Count to ${i}.` }],
    max_tokens: 8,
    seed: i,
    stream: true,
    stream_options: { include_usage: true },
  });
  assert.equal(events.at(-1), "[DONE]");
  assert.ok(!events.slice(0, -1).includes("[DONE]"), "[DONE] before the end");
  const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
  const s = joinChatChunks(chunks, { includeUsage: true });
  assert.ok(["stop", "length"].includes(s.finish));
  assert.ok(s.usage.completion_tokens <= 8);
  return s;
}

const checks = [];
for (let r = 0; r < rounds; r++) {
  checks.push([`round ${r + 1}: ${clients} concurrent streams complete and well-formed`, async () => {
    const results = await Promise.all(Array.from({ length: clients }, (_, i) => one(i)));
    assert.equal(new Set(results.map((s) => s.id)).size, clients, "response ids repeat");
  }]);
}
await run(checks);
