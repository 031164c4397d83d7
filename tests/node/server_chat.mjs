// Chat completions through the OpenAI client: shapes, streaming vs. whole answers, usage,
// logprobs, stop strings and a forced tool call. The model is tiny and random, so the checks
// are invariants: a greedy request gives the same text streamed or not.
import { assert, assertUsage, client, joinChatChunks, model, run } from "./server_common.mjs";

const openai = client();
const messages = [{ role: "user", content: "What is the capital of Japan?" }];
const base = { model, messages, temperature: 0, seed: 7, max_tokens: 12 };

async function streamed(body) {
  const stream = await openai.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } });
  const chunks = [];
  for await (const c of stream) chunks.push(c);
  return joinChatChunks(chunks, { includeUsage: true });
}

function message(r) {
  assert.match(r.id, /^chatcmpl-/);
  assert.equal(r.object, "chat.completion");
  assert.equal(r.model, model);
  assert.equal(r.choices.length, 1);
  const ch = r.choices[0];
  assert.equal(ch.index, 0);
  assert.equal(ch.message.role, "assistant");
  assert.ok(["stop", "length", "tool_calls"].includes(ch.finish_reason), ch.finish_reason);
  return ch;
}

let whole;
await run([
  ["GET /v1/models lists the served model", async () => {
    const list = await openai.models.list();
    assert.deepEqual(list.data.map((m) => m.id), [model]);
  }],
  ["non-streaming chat has OpenAI's shape and usage", async () => {
    whole = await openai.chat.completions.create(base);
    const ch = message(whole);
    assertUsage(whole.usage, 12);
    if (ch.finish_reason === "length") assert.equal(whole.usage.completion_tokens, 12);
  }],
  ["streamed deltas add up to the non-streamed answer (greedy)", async () => {
    const s = await streamed(base);
    const ch = whole.choices[0];
    assert.equal(s.content, ch.message.content ?? "");
    assert.equal(s.reasoning, ch.message.reasoning_content ?? "");
    assert.equal(s.finish, ch.finish_reason);
    assert.deepEqual(s.usage, whole.usage);
  }],
  ["thinking off: no reasoning_content, same text streamed or not", async () => {
    const body = { ...base, chat_template_kwargs: { enable_thinking: false }, max_tokens: 10 };
    const r = await openai.chat.completions.create(body);
    const ch = message(r);
    assert.ok(!ch.message.reasoning_content, "reasoning with thinking off");
    const s = await streamed(body);
    assert.equal(s.reasoning, "");
    assert.equal(s.content, ch.message.content ?? "");
  }],
  ["reasoning_effort and reasoning_content in input messages are accepted", async () => {
    const r = await openai.chat.completions.create({
      ...base,
      max_tokens: 3,
      reasoning_effort: "low",
      messages: [
        { role: "user", content: "Hi" },
        { role: "assistant", content: "Hello!", reasoning_content: "The user greets me." },
        { role: "user", content: "How are you?" },
      ],
    });
    message(r);
  }],
  ["max_completion_tokens limits the output", async () => {
    const r = await openai.chat.completions.create({ ...base, max_tokens: undefined, max_completion_tokens: 2 });
    assert.ok(r.usage.completion_tokens <= 2);
  }],
  ["logprobs: OpenAI's content shape, greedy picks the best alternative", async () => {
    const r = await openai.chat.completions.create({ ...base, max_tokens: 6, logprobs: true, top_logprobs: 3 });
    const content = r.choices[0].logprobs.content;
    assert.equal(content.length, r.usage.completion_tokens);
    for (const t of content) {
      assert.equal(typeof t.token, "string");
      assert.ok(t.logprob <= 0);
      assert.ok(Array.isArray(t.bytes) && t.bytes.every((b) => Number.isInteger(b) && b >= 0 && b < 256));
      assert.equal(t.top_logprobs.length, 3);
      for (let i = 1; i < 3; i++) assert.ok(t.top_logprobs[i - 1].logprob >= t.top_logprobs[i].logprob);
      assert.deepEqual(t.top_logprobs[0].bytes, t.bytes, "greedy did not pick the most likely token");
    }
    const s = await streamed({ ...base, max_tokens: 6, logprobs: true, top_logprobs: 3 });
    assert.deepEqual(s.logprobs.map((t) => t.bytes), content.map((t) => t.bytes));
  }],
  ["a stop string cuts the output before it, streamed or not", async () => {
    const body = { ...base, chat_template_kwargs: { enable_thinking: false }, max_tokens: 16 };
    const text = (await openai.chat.completions.create(body)).choices[0].message.content ?? "";
    assert.ok(text.length >= 4, `too little text to cut: ${JSON.stringify(text)}`);
    const chars = [...text];
    const stop = chars.slice(2, 4).join("");
    const expected = text.slice(0, text.indexOf(stop));
    const r = await openai.chat.completions.create({ ...body, stop: [stop, "\u0000never"] });
    assert.equal(r.choices[0].message.content ?? "", expected);
    assert.equal(r.choices[0].finish_reason, "stop");
    const s = await streamed({ ...body, stop });
    assert.equal(s.content, expected);
    assert.equal(s.finish, "stop");
  }],
  ["tool_choice naming a function forces the call's start through the parser", async () => {
    const tools = [{
      type: "function",
      function: { name: "get_weather", description: "Weather of a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } },
    }];
    const body = { ...base, tools, tool_choice: { type: "function", function: { name: "get_weather" } }, max_tokens: 8 };
    const r = await openai.chat.completions.create(body);
    const ch = message(r);
    const s = await streamed(body);
    if (ch.message.tool_calls?.length) {
      assert.equal(ch.finish_reason, "tool_calls");
      assert.equal(ch.message.tool_calls[0].type, "function");
      assert.equal(ch.message.tool_calls[0].function.name, "get_weather");
      JSON.parse(ch.message.tool_calls[0].function.arguments);
      assert.deepEqual(s.calls.map((c) => c.name), ch.message.tool_calls.map((c) => c.function.name));
    } else {
      // The random model never closes the call: the parser keeps the unfinished block as
      // content, which must begin with the forced prefix.
      assert.ok((ch.message.content ?? "").startsWith("<tool_call>\n<function=get_weather>\n"), JSON.stringify(ch.message.content));
      assert.equal(s.content, ch.message.content);
    }
    assert.ok(!ch.message.reasoning_content, "a forced call must not open in reasoning");
  }],
  ["tool_choice none and auto are accepted with tools", async () => {
    const tools = [{ type: "function", function: { name: "f", parameters: { type: "object", properties: {} } } }];
    for (const tool_choice of ["none", "auto", "required"]) {
      message(await openai.chat.completions.create({ ...base, max_tokens: 3, tools, tool_choice }));
    }
  }],
  ["response_format json_object is accepted", async () => {
    message(await openai.chat.completions.create({ ...base, max_tokens: 3, response_format: { type: "json_object" } }));
  }],
  ["priority is accepted", async () => {
    message(await openai.chat.completions.create({ ...base, max_tokens: 2, priority: 5 }));
  }],
]);
