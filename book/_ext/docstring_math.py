"""Sphinx extension of the course's website: the formulas of attnlib's docstrings rendered as math.

The docstrings write their formulas in plain text, as `help()` in a notebook shows them
("softmax(Q K^T * scale + mask) V"). On the API page each known formula becomes a :math: role
(inline) or a math block (a literal block made only of formulas); any other text is left as it is.
A formula this table does not know stays plain text, which tests/site/ notices for the main ones.
"""

from __future__ import annotations

INLINE = {
    "Attention(Q, K, V) = softmax(Q K^T * scale + mask) V":
        r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}(Q K^\top \cdot \mathrm{scale} + \mathrm{mask})\, V",
    "softmax(Q K^T * scale + mask) V": r"\mathrm{softmax}(Q K^\top \cdot \mathrm{scale} + \mathrm{mask})\, V",
    "a(q, k) = w_v^T tanh(W_q q + W_k k)": r"a(q, k) = w_v^\top \tanh(W_q q + W_k k)",
    "a(s, h) = v_a^T tanh(W_a s + U_a h)": r"a(s, h) = v_a^\top \tanh(W_a s + U_a h)",
    "w_v^T tanh(W_q q_i + W_k k_j)": r"w_v^\top \tanh(W_q q_i + W_k k_j)",
    "1 / sqrt(E)": r"1 / \sqrt{E}",
    "Q @ K^T = scores": r"Q K^\top = \mathrm{scores}",
    "weights @ V = output": r"\mathrm{weights}\; V = \mathrm{output}",
    "log sum_j exp(score_ij)": r"\log \sum_j \exp(\mathrm{score}_{ij})",
    "``positions[t] * base ** (-2i / D)``": r"\mathrm{positions}[t] \cdot \mathrm{base}^{-2i/D}",
    "``base ** (-2i / E)``": r"\mathrm{base}^{-2i/E}",
}
BLOCK = {
    "PE[t, 2i]     = sin(t / base ** (2i / E))": r"PE_{t,\,2i} = \sin\left(t / \mathrm{base}^{2i/E}\right)",
    "PE[t, 2i + 1] = cos(t / base ** (2i / E))": r"PE_{t,\,2i+1} = \cos\left(t / \mathrm{base}^{2i/E}\right)",
    "(a, b) -> (a cos - b sin, a sin + b cos)":
        r"(a, b) \mapsto (a \cos\theta - b \sin\theta,\; a \sin\theta + b \cos\theta)",
}


def _blocks(lines: list[str]) -> list[str]:
    """A `::` literal block whose lines are all known formulas -> a `.. math::` block."""
    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        if line.rstrip().endswith("::") and i + 1 < len(lines) and not lines[i + 1].strip():
            j = i + 2
            while j < len(lines) and (lines[j].startswith((" ", "\t")) or not lines[j].strip()):
                j += 1
            block = [b.strip() for b in lines[i + 2:j] if b.strip()]
            if block and all(b in BLOCK for b in block):
                indent = line[: len(line) - len(line.lstrip())]
                out.append(line.rstrip()[:-1])  # "...::" -> "...:"
                out += ["", f"{indent}.. math::", ""]
                for b in block:
                    out += [f"{indent}   {BLOCK[b]}", ""]
                i = j
                continue
        out.append(line)
        i += 1
    return out


def _inline(line: str) -> str:
    for text in sorted(INLINE, key=len, reverse=True):
        if text in line:
            return line.replace(text, f":math:`{INLINE[text]}`")
    return line


def render_formulas(app, what, name, obj, options, lines: list[str]) -> None:
    if not name.startswith("attnlib"):
        return
    lines[:] = [_inline(line) for line in _blocks(lines)]


def setup(app):
    app.connect("autodoc-process-docstring", render_formulas)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
