"""Input checks shared by attnlib's public functions.

Every check raises with a message that names the argument, what was expected and what
was received, so a learner can fix the call without reading attnlib's source.
"""

from __future__ import annotations

import math
import numbers

import torch


def shape_str(x: torch.Tensor | torch.Size | tuple) -> str:
    """Format a shape as ``(2, 3, 4)``; a 0-d shape as ``()``."""
    dims = tuple(x.shape if isinstance(x, torch.Tensor) else x)
    return f"({dims[0]},)" if len(dims) == 1 else "(" + ", ".join(str(d) for d in dims) + ")"


def check_tensor(name: str, x: object) -> torch.Tensor:
    """Raise TypeError unless ``x`` is a tensor."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    return x


def check_floating(name: str, x: object) -> torch.Tensor:
    """Raise TypeError unless ``x`` is a floating-point tensor."""
    check_tensor(name, x)
    if not x.is_floating_point():
        raise TypeError(
            f"{name} must be a floating-point tensor (float16, bfloat16, float32 or float64), "
            f"got dtype {x.dtype}; convert it with {name}.float()"
        )
    return x


def check_min_dims(name: str, x: torch.Tensor, ndim: int, layout: str) -> None:
    """Raise ValueError unless ``x`` has at least ``ndim`` dimensions."""
    if x.dim() < ndim:
        raise ValueError(
            f"{name} must have at least {ndim} dimensions {layout}, got shape {shape_str(x)}"
        )


def check_ndim(name: str, x: torch.Tensor, ndim: int, layout: str) -> None:
    """Raise ValueError unless ``x`` has exactly ``ndim`` dimensions."""
    if x.dim() != ndim:
        raise ValueError(f"{name} must have shape {layout}, got shape {shape_str(x)}")


def check_same_dtype_device(**tensors: torch.Tensor) -> None:
    """Raise TypeError if the tensors differ in dtype, ValueError if they differ in device."""
    names = list(tensors)
    first = tensors[names[0]]
    for name in names[1:]:
        x = tensors[name]
        if x.dtype != first.dtype:
            raise TypeError(
                f"{names[0]} and {name} must have the same dtype, "
                f"got {names[0]} {first.dtype} and {name} {x.dtype}"
            )
        if x.device != first.device:
            raise ValueError(
                f"{names[0]} and {name} must be on the same device, "
                f"got {names[0]} on {first.device} and {name} on {x.device}"
            )


def check_matches_parameters(names: str, x: torch.Tensor, parameter: torch.Tensor) -> None:
    """Raise TypeError unless ``x`` has the module parameters' dtype, ValueError unless their device."""
    if x.dtype != parameter.dtype:
        raise TypeError(
            f"{names} must have the module's dtype {parameter.dtype}, got {x.dtype}; convert the module "
            f"with .to({x.dtype}) or the inputs with .to({parameter.dtype})"
        )
    if x.device != parameter.device:
        raise ValueError(f"{names} must be on the module's device {parameter.device}, got {x.device}")


def check_batch_first_inputs(
    parameter: torch.Tensor, inputs: tuple[tuple[str, object, str, int | None, str], ...]
) -> None:
    """Check a module's (query, key, value) inputs, each batch first and 3-D.

    ``inputs`` holds three ``(name, tensor, layout, width, width_layout)``: the tensor must
    be floating, 3-D (else the error shows ``layout``), with last dimension ``width`` unless
    that is None (else it shows ``width_layout``), of ``parameter``'s dtype and device; all three share the
    batch size B, and the last two (key and value) their length Tk.
    """
    for name, x, layout, width, width_layout in inputs:
        check_floating(name, x)
        check_ndim(name, x, 3, layout)
        if width is not None and x.shape[-1] != width:
            raise ValueError(f"{name} must have shape {width_layout}, got shape {shape_str(x)}")
    (q_name, query, *_), (k_name, key, *_), (v_name, value, *_) = inputs
    check_same_dtype_device(**{q_name: query, k_name: key, v_name: value})
    check_matches_parameters(f"{q_name}, {k_name} and {v_name}", query, parameter)
    if not query.shape[0] == key.shape[0] == value.shape[0]:
        raise ValueError(
            f"{q_name}, {k_name} and {v_name} must have the same batch size B, got {q_name} {shape_str(query)}, "
            f"{k_name} {shape_str(key)} and {v_name} {shape_str(value)}"
        )
    if key.shape[1] != value.shape[1]:
        raise ValueError(
            f"{k_name} and {v_name} must have the same length Tk (one value per key), "
            f"got {k_name} {shape_str(key)} and {v_name} {shape_str(value)}"
        )


def is_real_number(x: object) -> bool:
    """True for a Python or NumPy int or float (``np.float32(0.5)`` too), False for a bool."""
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def check_bool(name: str, x: object) -> bool:
    """Return ``x``; raise TypeError unless it is True or False (a string such as "False" is truthy)."""
    if not isinstance(x, bool):
        raise TypeError(f"{name} must be True or False, got {type(x).__name__} {x!r}")
    return x


def check_dropout(name: str, p: object) -> float:
    """Return ``p`` as a float; raise ValueError unless it is a real number (not a bool) in [0, 1)."""
    if not is_real_number(p) or not 0.0 <= p < 1.0:
        raise ValueError(f"{name} must be a float in [0, 1), got {p!r}")
    return float(p)


def check_scale(scale: object) -> float | None:
    """Return ``scale`` as a float (None stays None); TypeError unless a real number, ValueError unless finite."""
    if scale is None:
        return None
    if not is_real_number(scale):
        raise TypeError(f"scale must be a float or None, got {type(scale).__name__}")
    if not math.isfinite(scale):
        raise ValueError(f"scale must be a finite float (default 1 / sqrt(E)), got {scale!r}")
    return float(scale)


def broadcast_batch(**tensors: torch.Tensor) -> torch.Size:
    """Broadcast the leading (batch) dimensions of tensors laid out as (..., T, D).

    Raises ValueError naming every tensor's shape when they do not broadcast.
    """
    try:
        return torch.broadcast_shapes(*(x.shape[:-2] for x in tensors.values()))
    except RuntimeError:
        shapes = ", ".join(f"{n} {shape_str(x)}" for n, x in tensors.items())
        raise ValueError(
            "the batch dimensions (all but the last two) of "
            + " and ".join(tensors)
            + f" must be equal or broadcastable, got {shapes}"
        ) from None


def check_mask(
    name: str,
    mask: object,
    target: torch.Size,
    *,
    layout: str,
    like: torch.Tensor,
    allow_float: bool = True,
) -> torch.Tensor:
    """Check an attention mask against the shape it must broadcast to.

    The mask must broadcast to ``target`` without enlarging it: a mask with more
    dimensions than ``target``, or one whose broadcast would grow a batch dimension of
    size 1 in ``target`` to more, raises instead of silently returning a larger result.
    Boolean masks are accepted; floating masks (added to the scores) only when
    ``allow_float`` and with ``like``'s dtype. Integer masks and floating masks made only
    of 0 and 1 raise, because they are almost always a boolean mask of the wrong dtype;
    a floating mask holding NaN or +inf raises, because it would make the weights NaN.
    The device is checked first, so no value is read from a mask on another device; no
    value is read from a mask on the meta device, which has none.
    """
    check_tensor(name, mask)
    if mask.device != like.device:
        raise ValueError(f"{name} must be on {like.device} (where the scores are), got {mask.device}")
    if mask.dtype != torch.bool:
        if not mask.is_floating_point():
            raise TypeError(
                f"{name} must be a bool tensor (True = may attend)"
                + (" or a float tensor added to the scores" if allow_float else "")
                + f", got dtype {mask.dtype}; for a 0/1 mask whose 1 means 'may attend' pass {name}.bool(), "
                f"for one whose 1 means 'blocked' or padding (torch's convention) pass ~{name}.bool()"
            )
        if not allow_float:
            raise TypeError(f"{name} must be a bool tensor (True = may attend), got dtype {mask.dtype}")
        if mask.dtype != like.dtype:
            raise TypeError(
                f"a float {name} is added to the scores and must have their dtype {like.dtype}, "
                f"got {mask.dtype}"
            )
        if mask.is_meta:
            pass  # a meta tensor holds no values to check (torch reads none either)
        elif bool(((mask == 0) | (mask == 1)).all()) and bool((mask == 1).any()):
            raise ValueError(
                f"{name} is a float tensor of only 0s and 1s; a float mask is added to the "
                f"scores, so this would shift them instead of masking. If 1 means 'may attend', "
                f"pass {name}.bool(); if 1 means 'blocked', pass ~{name}.bool()"
            )
        elif bool((mask.isnan() | mask.isposinf()).any()):
            raise ValueError(
                f"a float {name} must hold finite values or -inf (blocked), got NaN or +inf, "
                f"which would make the weights NaN"
            )
    try:
        broadcast = torch.broadcast_shapes(mask.shape, target)
    except RuntimeError:
        broadcast = None
    if mask.dim() > len(target) or broadcast != target:
        raise ValueError(
            f"{name} must broadcast to {layout} = {shape_str(target)} without enlarging it, "
            f"got shape {shape_str(mask)}. A (B, Tk) padding mask needs its query (and head) "
            f"axes: mask[:, None, :] for 3-D inputs, mask[:, None, None, :] for 4-D inputs"
        )
    return mask


def check_key_mask(key_mask: object, batch: int, tk: int, like: torch.Tensor) -> torch.Tensor:
    """Check a module's ``key_mask``: bool (B, Tk), True = real key, on ``like``'s device.

    Raises TypeError for a non-tensor or a mask that is not bool (naming the conversion for
    torch's and Hugging Face's conventions), ValueError for another shape or device.
    """
    check_tensor("key_mask", key_mask)
    if key_mask.dtype != torch.bool:
        raise TypeError(
            f"key_mask must be a bool tensor (B, Tk), True = real key, got dtype {key_mask.dtype}; "
            "for a 0/1 mask whose 1 means a real key (Hugging Face's attention_mask) pass key_mask.bool(), "
            "for torch's key_padding_mask (True or 1 = padding) pass ~key_padding_mask.bool(), and for a "
            "float key_padding_mask pass attn_mask=from_key_padding_mask(key_padding_mask) instead"
        )
    if key_mask.shape != (batch, tk):
        raise ValueError(
            f"key_mask must have shape (B, Tk) = {shape_str((batch, tk))}, got shape {shape_str(key_mask)}"
        )
    if key_mask.device != like.device:
        raise ValueError(f"key_mask must be on {like.device} (where the inputs are), got {key_mask.device}")
    return key_mask
