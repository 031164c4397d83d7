// Priority at the HTTP level on a server with two seats (--max-seqs 2): while two priority-10
// streams hold both seats, a priority-0 request gets its first token before either finishes.
// NIWA_PRIORITY_MODE=field sends "priority" in the body; =key leaves it out and relies on the
// API keys' default priorities (NIWA_BATCH_KEY at 10, NIWA_CHAT_KEY at 0).
import { assert, joinChatChunks, model, run, url } from "./server_common.mjs";

const mode = process.env.NIWA_PRIORITY_MODE ?? "field";
const batchKey = process.env.NIWA_BATCH_KEY ?? "none";
const chatKey = process.env.NIWA_CHAT_KEY ?? "none";

// Opens a stream and reads it in the background; `firstContent` resolves at its first text,
// `done` with the joined result.
function open(body, apiKey) {
  const state = { finished: false };
  let firstResolve;
  state.firstContent = new Promise((r) => (firstResolve = r));
  state.done = (async () => {
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${apiKey}` },
      body: JSON.stringify({ ...body, stream: true }),
    });
    if (res.status !== 200) assert.fail(`stream answered ${res.status}: ${await res.text()}`);
    const decoder = new TextDecoder();
    let buffer = "";
    const chunks = [];
    let sawDone = false;
    for await (const piece of res.body) {
      buffer += decoder.decode(piece, { stream: true });
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (!event.startsWith("data: ")) continue;
        if (event === "data: [DONE]") {
          sawDone = true;
          continue;
        }
        assert.ok(!sawDone, "an event after [DONE]");
        const c = JSON.parse(event.slice(6));
        chunks.push(c);
        const ch = c.choices[0];
        if (ch?.delta?.content || ch?.delta?.reasoning_content) firstResolve();
        if (ch?.finish_reason) state.finished = true;
      }
    }
    assert.ok(sawDone, "no [DONE]");
    firstResolve();
    return joinChatChunks(chunks);
  })();
  return state;
}

const body = (priority, max_tokens) => ({
  model,
  messages: [{ role: "user", content: "Write a long story." }],
  max_tokens,
  temperature: 0,
  chat_template_kwargs: { enable_thinking: false },
  ...(mode === "field" ? { priority } : {}),
});

await run([
  [`a priority-0 request overtakes two running priority-10 streams (${mode})`, async () => {
    const low = [open(body(10, 400), batchKey), open(body(10, 400), batchKey)];
    await Promise.all(low.map((s) => s.firstContent));
    assert.ok(low.every((s) => !s.finished), "a priority-10 stream finished too early for the test");
    const high = open(body(0, 4), chatKey);
    await high.firstContent;
    const unfinished = low.filter((s) => !s.finished).length;
    assert.equal(unfinished, 2, "the priority-0 request waited for a priority-10 stream to finish");
    const results = await Promise.all([...low, high].map((s) => s.done));
    for (const r of results) assert.ok(["stop", "length"].includes(r.finish));
  }],
]);
