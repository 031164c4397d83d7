#!/usr/bin/python3
"""Renders chat-template test cases with Python's jinja2, set up the way transformers sets it
up for apply_chat_template, so the C++ interpreter can be compared with it byte for byte.

usage: render_reference.py CASES.json   (run with Debian's /usr/bin/python3 + python3-jinja2)

CASES.json: {"cases": [{"template": str, "context": {...}} | {"template": str, "request": {...}}]}
A "request" is an OpenAI chat-completions body, turned into template variables the way
vLLM/transformers do (independently of the C++ code under test).
Prints a JSON list, one entry per case: {"output": str} or {"error": str, "raised": bool},
where "raised" means the template itself called raise_exception().
"""

import copy
import json
import sys

try:
    import jinja2
    import jinja2.ext
    from jinja2.sandbox import ImmutableSandboxedEnvironment
except ImportError:
    sys.stderr.write("render_reference.py: python3-jinja2 is not installed (apt-get install python3-jinja2)\n")
    sys.exit(3)


class RaisedByTemplate(jinja2.exceptions.TemplateError):
    """What raise_exception() throws; transformers raises a plain TemplateError."""


class GenerationBlock(jinja2.ext.Extension):
    """transformers' {% generation %} marks assistant text; rendering leaves it unchanged."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return jinja2.nodes.Scope(body, lineno=lineno)


def make_environment():
    def raise_exception(message):
        raise RaisedByTemplate(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        # transformers replaces jinja2's tojson (which escapes HTML) with plain json.dumps.
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[GenerationBlock, jinja2.ext.loopcontrols]
    )
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    return env


def request_to_variables(request):
    messages = copy.deepcopy(request["messages"])
    for message in messages:
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            if isinstance(function.get("arguments"), str):
                function["arguments"] = json.loads(function["arguments"])
    variables = {
        "messages": messages,
        "tools": request.get("tools") or None,
        "add_generation_prompt": request.get("add_generation_prompt", True),
        "bos_token": "<|endoftext|>",
        "eos_token": "<|im_end|>",
    }
    if request.get("reasoning_effort") is not None:
        variables["reasoning_effort"] = request["reasoning_effort"]
    variables.update(request.get("chat_template_kwargs") or {})
    return variables


def render(env, case):
    try:
        template = env.from_string(case["template"])
        variables = request_to_variables(case["request"]) if "request" in case else case.get("context", {})
        return {"output": template.render(**variables)}
    except RaisedByTemplate as e:
        return {"error": str(e), "raised": True}
    except Exception as e:  # any other failure: the C++ side must fail too
        return {"error": f"{type(e).__name__}: {e}", "raised": False}


def main():
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    with open(sys.argv[1], encoding="utf-8") as f:
        cases = json.load(f)["cases"]
    env = make_environment()
    json.dump([render(env, c) for c in cases], sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
