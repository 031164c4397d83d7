// Niwa's own chat template for synthetic models, written after MODEL.md's description of
// Bonsai 2's: same turns, tags and whitespace, its own wording. The server renders it with
// the same interpreter as a real model's template, so tests exercise that path end to end.
#include "engine/text/synthetic_template.h"

namespace niwa::text {

std::string_view synthetic_chat_template() {
    static constexpr std::string_view kTemplate = R"JINJA(
{#- ---- Settings: reasoning effort and thinking ---------------------------------------- #}
{%- set effort = reasoning_effort if reasoning_effort is defined and reasoning_effort is not none else 'xhigh' %}
{%- if effort not in ['low', 'medium', 'xhigh'] %}
    {{- raise_exception("reasoning_effort must be low, medium or xhigh, not '" ~ effort ~ "'.") }}
{%- endif %}
{%- set thinking = enable_thinking if enable_thinking is defined else true %}
{%- set instruction = '' %}
{%- if thinking and effort == 'xhigh' %}
    {%- set instruction = 'Think the problem through carefully and thoroughly before you answer.' %}
{%- elif thinking and effort == 'low' %}
    {%- set instruction = 'Keep your thinking short and get to the answer quickly.' %}
{%- endif %}

{#- ---- Message content: a string, or a list of text and image parts ------------------ #}
{%- macro render_content(content) %}
    {%- if content is string %}
        {{- content }}
    {%- elif content is iterable and content is not mapping %}
        {%- for part in content %}
            {%- if part.type == 'text' %}
                {{- part.text }}
            {%- elif part.type == 'image' or part.type == 'image_url' %}
                {{- '<|vision_start|><|image_pad|><|vision_end|>' }}
            {%- else %}
                {{- raise_exception("Unsupported content part type '" ~ part.type ~ "'.") }}
            {%- endif %}
        {%- endfor %}
    {%- elif content is not none %}
        {{- raise_exception('Message content must be a string or a list of parts.') }}
    {%- endif %}
{%- endmacro %}

{#- ---- System turn: instruction, tools, the caller's system text ---------------------- #}
{%- set sections = [] %}
{%- if instruction %}
    {%- set sections = sections + [instruction] %}
{%- endif %}
{%- if tools %}
    {%- set listing = namespace(text='# Tools\n\nThese functions are available. Each one is described by its JSON signature inside <tools></tools>:\n<tools>') %}
    {%- for tool in tools %}
        {%- set listing.text = listing.text + '\n' + tool | tojson %}
    {%- endfor %}
    {%- set listing.text = listing.text + '\n</tools>\n\n' %}
    {%- set listing.text = listing.text + 'To call a function, reply with the block below and write nothing after it:\n\n<tool_call>\n<function=name_of_the_function>\n<parameter=name_of_an_argument>\nits value\n</parameter>\n</function>\n</tool_call>\n\n' %}
    {%- set listing.text = listing.text + 'Give every required argument in its own <parameter> block. Write strings as they are and any other value as JSON. To call several functions, write one <tool_call> block for each.' %}
    {%- set sections = sections + [listing.text] %}
{%- endif %}
{%- if messages and messages[0].role == 'system' %}
    {%- set sections = sections + [render_content(messages[0].content)] %}
{%- endif %}
{%- if sections %}
    {{- '<|im_start|>system\n' + sections | join('\n\n') + '<|im_end|>\n' }}
{%- endif %}

{#- ---- The conversation ------------------------------------------------------------- #}
{%- for message in messages %}
    {%- if message.role == 'system' %}
        {%- if not loop.first %}
            {{- raise_exception('The system message must be the first message.') }}
        {%- endif %}
    {%- elif message.role == 'user' %}
        {{- '<|im_start|>user\n' + render_content(message.content) + '<|im_end|>\n' }}
    {%- elif message.role == 'assistant' %}
        {%- set content = render_content(message.content) %}
        {%- set reasoning = '' %}
        {%- if message.reasoning_content is string %}
            {%- set reasoning = message.reasoning_content %}
        {%- elif '</think>' in content %}
            {%- set reasoning = content.split('</think>')[0].split('<think>')[-1] %}
            {%- set content = content.split('</think>')[-1].lstrip('\n') %}
        {%- endif %}
        {{- '<|im_start|>assistant\n<think>\n' + reasoning.strip('\n') + '\n</think>\n\n' + content }}
        {%- if message.tool_calls %}
            {%- for call in message.tool_calls %}
                {%- set function = call.function if call.function is defined else call %}
                {%- if not loop.first %}
                    {{- '\n' }}
                {%- elif content %}
                    {{- '\n\n' }}
                {%- endif %}
                {{- '<tool_call>\n<function=' + function.name + '>\n' }}
                {%- if function.arguments is mapping %}
                    {%- for key, value in function.arguments.items() %}
                        {{- '<parameter=' + key + '>\n' }}
                        {{- value if value is string else value | tojson }}
                        {{- '\n</parameter>\n' }}
                    {%- endfor %}
                {%- endif %}
                {{- '</function>\n</tool_call>' }}
            {%- endfor %}
        {%- endif %}
        {{- '<|im_end|>\n' }}
    {%- elif message.role == 'tool' %}
        {%- if loop.first or loop.previtem.role != 'tool' %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\n<tool_response>\n' + render_content(message.content) + '\n</tool_response>' }}
        {%- if loop.last or loop.nextitem.role != 'tool' %}
            {{- '<|im_end|>\n' }}
        {%- endif %}
    {%- else %}
        {{- raise_exception("Unknown message role '" ~ message.role ~ "'.") }}
    {%- endif %}
{%- endfor %}

{#- ---- The turn the model writes next ------------------------------------------------ #}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n<think>\n' }}
    {%- if not thinking %}
        {{- '\n</think>\n\n' }}
    {%- endif %}
{%- endif %}
)JINJA";
    return kTemplate;
}

}  // namespace niwa::text
