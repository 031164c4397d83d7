// Bad requests get OpenAI error objects with the right status and a message that says what is
// wrong, and the server keeps serving: a good request follows every bad one.
import OpenAI from "openai";
import { assert, assertError, client, get, model, post, run } from "./server_common.mjs";

const openai = client();
const good = { model, messages: [{ role: "user", content: "Hi" }], max_tokens: 2, temperature: 0 };
const chat = (extra) => ({ ...good, ...extra });

async function stillServing() {
  const r = await post("/v1/chat/completions", good);
  assert.equal(r.status, 200, `the good request after a bad one failed: ${r.text}`);
  assert.equal(r.json.object, "chat.completion");
}

const cases = [
  ["malformed JSON: 400 with the position", () => post("/v1/chat/completions", '{"model": "x", "messages": [', { raw: true }),
    400, /not valid JSON \(at byte \d+\)/],
  ["body not an object: 400", () => post("/v1/chat/completions", "[1, 2]", { raw: true }), 400, /JSON object/],
  ["temperature of the wrong type names the field", () => post("/v1/chat/completions", chat({ temperature: "hot" })),
    400, /'temperature' must be a number/, "temperature"],
  ["max_tokens of the wrong type names the field", () => post("/v1/chat/completions", chat({ max_tokens: "many" })),
    400, /'max_tokens' must be an integer/, "max_tokens"],
  ["stream of the wrong type", () => post("/v1/chat/completions", chat({ stream: "yes" })), 400, /'stream' must be a boolean/, "stream"],
  ["stop of the wrong type", () => post("/v1/chat/completions", chat({ stop: 3 })), 400, /'stop' must be a string or an array/, "stop"],
  ["top_p out of range", () => post("/v1/chat/completions", chat({ top_p: 1.5 })), 400, /'top_p' must be between/, "top_p"],
  ["messages missing", () => post("/v1/chat/completions", { model, max_tokens: 2 }), 400, /'messages' is required/, "messages"],
  ["messages empty", () => post("/v1/chat/completions", chat({ messages: [] })), 400, /'messages' must be a non-empty array/],
  ["n other than 1", () => post("/v1/chat/completions", chat({ n: 2 })), 400, /'n' must be 1/, "n"],
  ["an image part needs the vision projector", () => post("/v1/chat/completions", chat({
      messages: [{ role: "user", content: [{ type: "text", text: "What is this?" }, { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }] }],
    })), 400, /image input needs the vision projector \(--mmproj\), which this server does not have yet/],
  ["unknown model: 404", () => post("/v1/chat/completions", chat({ model: "gpt-4o" })), 404, /'gpt-4o' does not exist/, "model"],
  ["reasoning_effort outside low|medium|xhigh", () => post("/v1/chat/completions", chat({ reasoning_effort: "extreme" })),
    400, /'reasoning_effort' must be "low", "medium" or "xhigh"/, "reasoning_effort"],
  ["top_logprobs without logprobs", () => post("/v1/chat/completions", chat({ top_logprobs: 2 })), 400, /needs 'logprobs'/],
  ["tool_choice naming an unknown function", () => post("/v1/chat/completions", chat({
      tools: [{ type: "function", function: { name: "f", parameters: {} } }], tool_choice: { type: "function", function: { name: "g" } },
    })), 400, /'g', which is not in 'tools'/],
  ["the template's own error: a system message that is not first", () => post("/v1/chat/completions", chat({
      messages: [{ role: "user", content: "Hi" }, { role: "system", content: "Be brief." }],
    })), 400, /system message must be the first/],
  ["a prompt longer than the context names both numbers", () => post("/v1/chat/completions", chat({
      messages: [{ role: "user", content: "word ".repeat(3000) }],
    })), 400, /the prompt has \d+ tokens but the context holds 512 tokens/],
  ["completions: prompt missing", () => post("/v1/completions", { model, max_tokens: 2 }), 400, /'prompt' is required/, "prompt"],
  ["completions: token id outside the vocabulary", () => post("/v1/completions", { model, prompt: [1, 99999999], max_tokens: 2 }),
    400, /token id 99999999 at position 1 is outside the vocabulary/],
  ["completions: several prompts", () => post("/v1/completions", { model, prompt: ["a", "b"], max_tokens: 2 }), 400, /one prompt/],
];

await run([
  ...cases.map(([name, send, status, pattern, param]) => [name, async () => {
    assertError(await send(), status, pattern, param);
    await stillServing();
  }]),
  ["unknown route: 404 in OpenAI's shape", async () => {
    assertError(await get("/v1/nothing-here"), 404, /no route GET \/v1\/nothing-here/);
  }],
  ["the OpenAI client raises its typed errors", async () => {
    await assert.rejects(openai.chat.completions.create(chat({ model: "nope" })), OpenAI.NotFoundError);
    await assert.rejects(openai.chat.completions.create(chat({ n: 3 })), OpenAI.BadRequestError);
    await stillServing();
  }],
]);
