// response_format json_object through the OpenAI client: the content is one JSON object
// (JSON.parse takes it, and it is an object) and the turn stops as it closes, for several
// seeds and temperatures, streamed and not. The model is tiny and random, so whatever it
// writes is the constraint's doing.
import { assert, client, joinChatChunks, model, run } from "./server_common.mjs";

const openai = client();
const messages = [{ role: "user", content: "Give me a JSON object describing Tokyo." }];
const base = {
  model,
  messages,
  max_tokens: 400,
  response_format: { type: "json_object" },
  chat_template_kwargs: { enable_thinking: false },
};

function assertObject(content, finish) {
  assert.equal(finish, "stop", `finish_reason ${finish} for ${JSON.stringify(content)}`);
  let value;
  try {
    value = JSON.parse(content);
  } catch (e) {
    assert.fail(`not JSON: ${JSON.stringify(content)} (${e.message})`);
  }
  assert.ok(value !== null && typeof value === "object" && !Array.isArray(value), JSON.stringify(content));
  assert.match(content, /\}\s*$/, "the content goes on after the object closed");
}

const settings = [
  { temperature: 0, seed: 1 },
  { temperature: 0.7, seed: 2 },
  { temperature: 1, seed: 3 },
  { temperature: 1, seed: 4, top_p: 0.9 },
];

await run([
  ...settings.map((s) => [`json_object, whole: ${JSON.stringify(s)}`, async () => {
    const r = await openai.chat.completions.create({ ...base, ...s });
    assertObject(r.choices[0].message.content ?? "", r.choices[0].finish_reason);
  }]),
  ...settings.map((s) => [`json_object, streamed: ${JSON.stringify(s)}`, async () => {
    const stream = await openai.chat.completions.create({ ...base, ...s, stream: true });
    const chunks = [];
    for await (const c of stream) chunks.push(c);
    const joined = joinChatChunks(chunks);
    assertObject(joined.content, joined.finish);
  }]),
  ["json_object streamed equals whole (greedy)", async () => {
    const whole = await openai.chat.completions.create({ ...base, temperature: 0 });
    const stream = await openai.chat.completions.create({ ...base, temperature: 0, stream: true });
    const chunks = [];
    for await (const c of stream) chunks.push(c);
    assert.equal(joinChatChunks(chunks).content, whole.choices[0].message.content);
  }],
  ["json_schema of an object is constrained too", async () => {
    const r = await openai.chat.completions.create({
      ...base,
      temperature: 1,
      seed: 5,
      response_format: { type: "json_schema", json_schema: { name: "city", schema: { type: "object" } } },
    });
    assertObject(r.choices[0].message.content ?? "", r.choices[0].finish_reason);
  }],
  ["json_object with tools and tool_choice none is constrained", async () => {
    const tools = [{ type: "function", function: { name: "f", parameters: { type: "object", properties: {} } } }];
    const r = await openai.chat.completions.create({ ...base, temperature: 1, seed: 6, tools, tool_choice: "none" });
    assertObject(r.choices[0].message.content ?? "", r.choices[0].finish_reason);
  }],
]);
