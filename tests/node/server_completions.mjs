// Legacy completions through the OpenAI client: shapes, streaming, usage, logprobs, token ids.
import { assert, assertUsage, client, model, run } from "./server_common.mjs";

const openai = client();
const base = { model, prompt: "Once upon a time", temperature: 0, max_tokens: 10 };

function choice(r) {
  assert.match(r.id, /^cmpl-/);
  assert.equal(r.object, "text_completion");
  assert.equal(r.model, model);
  assert.equal(r.choices.length, 1);
  const ch = r.choices[0];
  assert.equal(ch.index, 0);
  assert.equal(typeof ch.text, "string");
  assert.ok(["stop", "length"].includes(ch.finish_reason));
  return ch;
}

async function streamed(body) {
  const stream = await openai.completions.create({ ...body, stream: true, stream_options: { include_usage: true } });
  let text = "", finishes = 0, id = null, usage = null, last = null;
  const tokens = [];
  for await (const c of stream) {
    id ??= c.id;
    assert.equal(c.id, id);
    assert.equal(c.object, "text_completion");
    if (c.choices.length === 0) {
      usage = c.usage;
      continue;
    }
    assert.equal(last, null, "a chunk after the finish_reason");
    text += c.choices[0].text;
    if (c.choices[0].logprobs) tokens.push(...c.choices[0].logprobs.tokens);
    if (c.choices[0].finish_reason) {
      finishes++;
      last = c.choices[0].finish_reason;
    }
  }
  assert.equal(finishes, 1);
  assert.ok(usage);
  return { text, finish: last, usage, tokens };
}

let whole;
await run([
  ["non-streaming completion", async () => {
    whole = await openai.completions.create(base);
    choice(whole);
    assertUsage(whole.usage, 10);
  }],
  ["streamed text adds up to the non-streamed text", async () => {
    const s = await streamed(base);
    assert.equal(s.text, whole.choices[0].text);
    assert.equal(s.finish, whole.choices[0].finish_reason);
    assert.deepEqual(s.usage, whole.usage);
  }],
  ["a prompt of token ids is the same prompt", async () => {
    const a = await openai.completions.create({ ...base, prompt: [1, 2, 3, 4, 5] });
    const b = await openai.completions.create({ ...base, prompt: [[1, 2, 3, 4, 5]] });
    choice(a);
    assert.equal(a.usage.prompt_tokens, 5);
    assert.equal(a.choices[0].text, b.choices[0].text);
    const c = await openai.completions.create({ ...base, prompt: ["Once upon a time"] });
    assert.equal(c.choices[0].text, whole.choices[0].text);
  }],
  ["logprobs: tokens, token_logprobs, top_logprobs, text_offset", async () => {
    const r = await openai.completions.create({ ...base, logprobs: 2 });
    const lp = r.choices[0].logprobs;
    const n = r.usage.completion_tokens;
    assert.equal(lp.tokens.length, n);
    assert.equal(lp.token_logprobs.length, n);
    assert.equal(lp.top_logprobs.length, n);
    assert.equal(lp.text_offset.length, n);
    for (let i = 0; i < n; i++) {
      assert.ok(lp.token_logprobs[i] <= 0);
      assert.ok(Object.keys(lp.top_logprobs[i]).length >= 1);
      if (i > 0) assert.ok(lp.text_offset[i] >= lp.text_offset[i - 1]);
    }
    const s = await streamed({ ...base, logprobs: 2 });
    assert.deepEqual(s.tokens, lp.tokens);
  }],
  ["a stop string cuts the text", async () => {
    const text = whole.choices[0].text;
    assert.ok(text.length >= 3, `too little text: ${JSON.stringify(text)}`);
    const stop = [...text].slice(1, 3).join("");
    const r = await openai.completions.create({ ...base, stop });
    assert.equal(r.choices[0].text, text.slice(0, text.indexOf(stop)));
    assert.equal(r.choices[0].finish_reason, "stop");
    const s = await streamed({ ...base, stop });
    assert.equal(s.text, r.choices[0].text);
  }],
]);
