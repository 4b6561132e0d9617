# apply_repetition_penalties: in place, for seen tokens (prompt or output), positive logits
# are divided by the sequence's penalty and the others multiplied by it. Grid (seqs, vocab
# blocks); fp32 compute, one rounding.
import torch
import triton
import triton.language as tl


@triton.jit
def _repetition_kernel(logits_ptr, prompt_ptr, output_ptr, penalty_ptr, vocab,
                       BLOCK: tl.constexpr):
    seq = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < vocab
    offs = seq * vocab + cols
    x = tl.load(logits_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    seen = (tl.load(prompt_ptr + offs, mask=mask, other=0) != 0) | \
        (tl.load(output_ptr + offs, mask=mask, other=0) != 0)
    p = tl.load(penalty_ptr + seq).to(tl.float32)
    scaled = tl.where(x > 0, x / p, x * p)
    tl.store(logits_ptr + offs, tl.where(seen, scaled, x).to(logits_ptr.dtype.element_ty),
             mask=mask)


def kernel(logits, prompt_mask, output_mask, repetition_penalties):
    seqs, vocab = logits.shape
    if seqs == 0 or vocab == 0:
        return None
    block = 1024
    # bool tensors are read as bytes.
    prompt = prompt_mask.contiguous().view(torch.uint8)
    output = output_mask.contiguous().view(torch.uint8)
    _repetition_kernel[(seqs, triton.cdiv(vocab, block))](logits, prompt, output,
                                                          repetition_penalties, vocab,
                                                          BLOCK=block)
    return None
