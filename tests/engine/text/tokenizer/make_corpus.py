#!/usr/bin/python3
"""Writes the tokenizer conformance corpus: a JSON array of strings, the same on every run
(fixed seed, standard library only). Run with Debian's /usr/bin/python3:

    /usr/bin/python3 make_corpus.py --out corpus.json [--count 6000]
    /usr/bin/python3 make_corpus.py --bench-text 1000000 --out bench.txt   # for `tokenize --bench`

Characters are restricted to ones assigned in Unicode 14 (this Python's unicodedata, and
PCRE2 10.42's tables), so the reference (Node's newer ICU) and our tokenizer classify them
alike. Left out on purpose: U+0085 and U+FEFF, on which transformers.js' JavaScript \\s and
the Rust tokenizers' \\s disagree (we follow Rust; see the pre-tokenizer test), and U+017F
(long s), which case-insensitive 's matches in Rust but not in transformers.js.
"""
import argparse
import json
import random
import unicodedata

EXCLUDED = {0x85, 0xFEFF, 0x17F}

HIRAGANA = [chr(c) for c in range(0x3041, 0x3097)]
KATAKANA = [chr(c) for c in range(0x30A1, 0x30FB)] + ["ー"]
HALF_KATAKANA = [chr(c) for c in range(0xFF66, 0xFFA0)]
KANJI_COMMON = list("日本語東京大学生先今年月火水木金土人子女男山川田中上下左右前後時間分半午何国会社員"
                    "電車駅道店食飲見聞読書話言語気天雨雪花犬猫鳥魚肉米茶酒新古高安長短多少明暗白黒赤青"
                    "愛心思考知識技術開発研究情報処理計算機械学習深層推論速度記憶容量事務所")
FULL_PUNCT = list("、。「」『』（）！？：；～・…【】〈〉《》〔〕［］｛｝＋－＝％＆＃＠＊／＼｜")
FULL_DIGITS = [chr(c) for c in range(0xFF10, 0xFF1A)]
FULL_LATIN = [chr(c) for c in range(0xFF21, 0xFF3B)] + [chr(c) for c in range(0xFF41, 0xFF5B)]

JA_SENTENCES = [
    "今日はいい天気ですね。", "東京駅で待ち合わせしましょう！", "このモデルは２７Ｂパラメータです。",
    "「こんにちは」と彼女は言った。", "事務所のＰＣで推論サーバーを動かします。", "ｶﾀｶﾅのﾃｷｽﾄもあります｡",
    "価格は１，２８０円（税込）です。", "明日の会議は10時から、3階の会議室で。", "それは…本当ですか？",
    "『吾輩は猫である』を読みました。", "ＧＰＵが２枚あれば十分でしょう。", "ﾊﾟｿｺﾝとﾌﾟﾘﾝﾀｰ",
]

EN_WORDS = ("the of and to in is you that it he was for on are as with his they I at be this have from "
            "or one had by word but not what all were we when your can said there use an each which she do "
            "how their if will up other about out many then them these so some her would make like him into "
            "time has look two more write go see number no way could people my than first water been call who "
            "oil its now find long down day did get come made may part tokenizer inference server office model "
            "weights quantization throughput latency Kubernetes JavaScript PostgreSQL unbelievable "
            "internationalization antidisestablishmentarianism").split()
CONTRACTIONS = ["'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'T", "'RE", "'Re", "'rE", "'VE", "'Ve",
                "'M", "'LL", "'Ll", "'lL", "'D"]

CODE_SNIPPETS = [
    "def {f}(x, y=None):\n    if y is None:\n        return x * {n}\n    return x + y\n",
    "for (int i = 0; i < {n}; ++i) {{\n\tsum += a[i] * b[i];\n}}\n",
    "const {f} = async (req, res) => {{\n  const data = await fetch(`/api/${{req.id}}`);\n  return res.json(data);\n}};\n",
    "fn {f}(v: &[u32]) -> u64 {{\n    v.iter().map(|&x| x as u64).sum::<u64>() + {n}\n}}\n",
    "func {f}(w http.ResponseWriter, r *http.Request) {{\n\tfmt.Fprintf(w, \"%d\\n\", {n})\n}}\n",
    "SELECT id, name FROM users WHERE age >= {n} AND name LIKE '%{f}%' ORDER BY id DESC;\n",
    "#!/bin/sh\nset -eu\nfor f in *.txt; do\n  wc -l \"$f\" >> {f}.log\ndone\n",
    "{{\"{f}\": [{n}, 2.5e-3, true, null], \"nested\": {{\"k\": \"v\\t\\u00e9\"}}}}\n",
    "<div class=\"{f}\">\n  <p>Hello &amp; welcome &lt;user&gt;</p>\n</div>\n",
    "#include <vector>\ntemplate <typename T>\nT {f}(const std::vector<T>& v) {{ return v.empty() ? T{{}} : v[{n} % v.size()]; }}\n",
    "\tif (x != y) {{\r\n\t\treturn {n};\r\n\t}}\r\n",
    "    # comment: {f}\n    x = [i**2 for i in range({n}) if i % 3 == 0]\n",
]

EMOJI_BASE = [chr(c) for c in range(0x1F600, 0x1F650)] + [chr(c) for c in range(0x1F44A, 0x1F450)]
SKIN = [chr(c) for c in range(0x1F3FB, 0x1F400)]
ZWJ = ["👨‍👩‍👧‍👦", "👩🏽‍💻", "🧑🏿‍🚀", "👨‍❤️‍👨", "🏳️‍🌈", "🐻‍❄️", "👁️‍🗨️", "🧔🏻‍♂️"]
KEYCAPS = ["1️⃣", "#️⃣", "*️⃣", "9️⃣"]
FLAGS = ["JP", "US", "GB", "FR", "DE", "KR", "CN", "BR", "IN", "UA"]

COMBINING = ["e\u0301", "a\u0300", "o\u0308", "u\u0308", "n\u0303", "c\u0327", "A\u030A", "\u212B", "\u2126",
             "e\u0323\u0302", "a\u0306\u0303", "i\u0307\u0301", "\u1100\u1161\u11A8", "\u1112\u1161\u11AB",
             "\u30AB\u3099", "\u304B\u3099", "\u30CF\u309A", "x\u0301\u0302\u0303", "\u0915\u093F", "\u0928\u094D\u0924",
             "\u0E01\u0E34\u0E19", "\u0643\u064E\u062A\u064E\u0628\u064E", "\u05E9\u05C1\u05B8"]
SPECIALS = ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<think>", "</think>", "<tool_call>", "</tool_call>",
            "<tool_response>", "<|vision_start|>", "<|image_pad|>", "<|fim_prefix|>", "<|im_start", "<|im_end",
            "<think", "|>", "<|", "<|unknown|>", "<<|im_end|>>", "<|im_start|><|im_start|>"]
WHITESPACE = [" ", "  ", "   ", "\t", "\t\t", "\n", "\n\n", "\r\n", "\r", "\r\r\n", " \n ", "\u00A0", "\u3000",
              "\u2002", "\u2009", "\u200A", "\u2028", "\u2029", "\u202F", "\u205F", "\u1680", "\x0b", "\x0c"]


def assigned(cp):
    if cp in EXCLUDED or 0xD800 <= cp <= 0xDFFF:
        return False
    return unicodedata.category(chr(cp)) not in ("Cn", "Cs", "Co")


RANDOM_RANGES = [(0x20, 0x7E), (0xA0, 0x24F), (0x370, 0x3FF), (0x400, 0x4FF), (0x590, 0x5FF), (0x600, 0x6FF),
                 (0x900, 0x97F), (0xE00, 0xE7F), (0x1E00, 0x1EFF), (0x2000, 0x206F), (0x2190, 0x22FF),
                 (0x3000, 0x30FF), (0x4E00, 0x9FEF), (0xAC00, 0xD7A3), (0xFF00, 0xFFEF), (0x1F300, 0x1F5FF),
                 (0x1D400, 0x1D7FF), (0x0, 0x1F), (0x300, 0x36F)]


class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)

    def pick(self, seq, k=1):
        return "".join(self.r.choice(seq) for _ in range(k))

    def number(self):
        r = self.r
        n = r.choice([1, 2, 3, 4, 5, 7, 10, 16, 25, 40])
        digits = "".join(r.choice("0123456789") for _ in range(n))
        form = r.randrange(8)
        if form == 0:
            return "-" + digits
        if form == 1:
            return digits + "." + "".join(r.choice("0123456789") for _ in range(r.randint(1, 6)))
        if form == 2:
            return f"{int(digits):,}"
        if form == 3:
            return digits + "e" + r.choice(["-", "+", ""]) + str(r.randint(0, 308))
        if form == 4:
            return "".join(FULL_DIGITS[int(c)] for c in digits)
        if form == 5:
            return "".join(chr(0x660 + int(c)) for c in digits)
        if form == 6:
            return "0x" + "".join(r.choice("0123456789abcdefABCDEF") for _ in range(n))
        return digits

    def japanese(self):
        r = self.r
        parts = []
        for _ in range(r.randint(1, 6)):
            kind = r.randrange(8)
            if kind == 0:
                parts.append(self.pick(HIRAGANA, r.randint(1, 8)))
            elif kind == 1:
                parts.append(self.pick(KATAKANA, r.randint(1, 8)))
            elif kind == 2:
                parts.append(self.pick(KANJI_COMMON, r.randint(1, 5)))
            elif kind == 3:
                parts.append(self.pick(FULL_PUNCT))
            elif kind == 4:
                parts.append(self.pick(HALF_KATAKANA, r.randint(1, 6)))
            elif kind == 5:
                parts.append(r.choice(JA_SENTENCES))
            elif kind == 6:
                parts.append(self.pick(FULL_DIGITS, r.randint(1, 4)) + self.pick(FULL_LATIN, r.randint(0, 3)))
            else:
                parts.append(chr(r.randint(0x4E00, 0x9FEF)) * r.randint(1, 2))
        return "".join(parts)

    def english(self):
        r = self.r
        words = []
        for i in range(r.randint(1, 25)):
            w = r.choice(EN_WORDS)
            style = r.randrange(10)
            if style == 0:
                w = w.upper()
            elif style == 1:
                w = w.capitalize()
            elif style == 2:
                w += r.choice(CONTRACTIONS)
            words.append(w)
            if r.random() < 0.15:
                words[-1] += r.choice([",", ".", "!", "?", ";", ":", "...", "—", ")", "\"", "'"])
        text = " ".join(words)
        if r.random() < 0.3:
            text = "\"" + text + "\""
        return text

    def contractions(self):
        r = self.r
        return "".join(r.choice(["I", "you", "WE", "they", "it", "She", "'", " ", "don", "can", "x"]) + r.choice(CONTRACTIONS)
                       for _ in range(r.randint(1, 5)))

    def code(self):
        r = self.r
        f = r.choice(["main", "parse_args", "getUser", "calc", "_x", "handler2", "トークン", "données"])
        text = r.choice(CODE_SNIPPETS).format(f=f, n=r.randint(0, 10 ** r.randint(1, 9)))
        if r.random() < 0.3:
            text = text.replace("    ", "\t")
        if r.random() < 0.2:
            text = text.replace("\n", "\r\n")
        return text

    def emoji(self):
        r = self.r
        parts = []
        for _ in range(r.randint(1, 6)):
            kind = r.randrange(5)
            if kind == 0:
                parts.append(r.choice(EMOJI_BASE))
            elif kind == 1:
                parts.append(r.choice(EMOJI_BASE[-6:]) + r.choice(SKIN))
            elif kind == 2:
                parts.append(r.choice(ZWJ))
            elif kind == 3:
                parts.append("".join(chr(0x1F1E6 + ord(c) - ord("A")) for c in r.choice(FLAGS)))
            else:
                parts.append(r.choice(KEYCAPS))
            if r.random() < 0.3:
                parts.append(r.choice([" ", "!", "ok", "です", "\n"]))
        return "".join(parts)

    def combining(self):
        r = self.r
        return "".join(r.choice(COMBINING) + r.choice(["", "", " ", "x", "語", ".", "\u0301"])
                       for _ in range(r.randint(1, 6)))

    def whitespace(self):
        r = self.r
        return "".join(r.choice(WHITESPACE) * r.randint(1, 3) + r.choice(["", "a", "語", "1", "!", "😀", "é"])
                       for _ in range(r.randint(1, 6)))

    def special(self):
        r = self.r
        return "".join(r.choice(SPECIALS) + r.choice(["", "user\n", "hi", " ", "\n", "思考", "<", ">", "|"])
                       for _ in range(r.randint(1, 5)))

    def random_chars(self):
        r = self.r
        out = []
        while len(out) < r.randint(1, 30):
            lo, hi = r.choice(RANDOM_RANGES)
            cp = r.randint(lo, hi)
            if assigned(cp):
                out.append(chr(cp))
        return "".join(out)

    def mix(self):
        r = self.r
        makers = [self.japanese, self.english, self.code, self.emoji, self.combining, self.whitespace,
                  self.special, self.number, self.random_chars, self.contractions]
        return "".join(r.choice(makers)() for _ in range(r.randint(2, 5)))


def fixed_cases():
    """Hand-picked edge cases, ahead of the generated ones."""
    cases = ["", " ", "a", "\n", "\r", "\r\n", "\t", "  a", "a  ", "a \n b", "  \n\n  x", "Hello, world!",
             "こんにちは、世界！", "ｺﾝﾆﾁﾊ", "e\u0301", "\u00e9", "<|im_start|>user\nhi<|im_end|>\n",
             "<think>\n\n</think>\n\n", "<|endoftext|><|endoftext|>", "I'M YOU'RE WE'LL SHE'D", "'s'S's",
             "1234567890123456789012345678901234567890", "3.14159", "١٢٣", "𝟘𝟙𝟚", "x²+y³", "🇯🇵🇺🇸", "👩🏽‍💻",
             "\x00\x01\x1f\x7f", "a\u200bb", "a\u200db", "\u2028\u2029", "...", "!!!???", "―――", "~~~",
             "    def f():\n\t\treturn 1\n", "\u3000\u3000全角スペース", "ＡＢＣ１２３", "ｶﾞｷﾞｸﾞ"]
    cases += ["a" * 3000, " " * 1000 + "x", "1" * 500, "語" * 700, "\n" * 300, "😀" * 200, "ab " * 600,
              "\t" * 100 + "}", "!" * 800, "e\u0301" * 300]
    return cases


def write_bench_text(g, path, size):
    parts, n = [], 0
    while n < size:
        text = g.r.choice([g.japanese, g.japanese, g.english, g.english, g.code])() + g.r.choice(["\n", " ", "\n\n"])
        parts.append(text)
        n += len(text.encode("utf-8"))
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join(parts))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--count", type=int, default=6000)
    ap.add_argument("--seed", type=int, default=20240611)
    ap.add_argument("--bench-text", type=int, metavar="BYTES",
                    help="write plain text instead: mixed Japanese/English prose and code, about BYTES long")
    args = ap.parse_args()
    g = Gen(args.seed)
    if args.bench_text:
        write_bench_text(g, args.out, args.bench_text)
        return
    makers = [g.japanese, g.english, g.code, g.emoji, g.combining, g.whitespace, g.special, g.number,
              g.random_chars, g.contractions, g.mix, g.mix, g.mix]
    corpus = fixed_cases()
    while len(corpus) < args.count:
        corpus.append(makers[len(corpus) % len(makers)]())
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(corpus, f, ensure_ascii=True)


if __name__ == "__main__":
    main()
