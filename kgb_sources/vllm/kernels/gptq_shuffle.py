# vLLM gptq_shuffle(q_weight, q_perm, bit), in place on q_weight (int32 [K * bit / 32, N],
# packed along K). New row i = old row q_perm[i] when q_perm is not empty; then, for 4-bit
# words, the value of row 8w + r moves to nibble (0, 4, 1, 5, 2, 6, 3, 7)[r]; 8-bit words keep
# their order. The kernel reads a copy (rows move between words) and writes q_weight.
import torch
import triton
import triton.language as tl


@triton.jit
def _shuffle_kernel(src_ptr, dst_ptr, perm_ptr, N, HAS_PERM: tl.constexpr,
                    BITS: tl.constexpr, BLOCK_N: tl.constexpr):
    PER_WORD: tl.constexpr = 32 // BITS
    MASK: tl.constexpr = (1 << BITS) - 1
    word_row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    ok = cols < N
    packed = tl.zeros([BLOCK_N], dtype=tl.int32)
    for r in range(0, PER_WORD):
        row = word_row * PER_WORD + r
        if HAS_PERM:
            row = tl.load(perm_ptr + row)
        words = tl.load(src_ptr + (row // PER_WORD).to(tl.int64) * N + cols, mask=ok, other=0)
        value = (words >> ((row % PER_WORD) * BITS)) & MASK
        if BITS == 4:
            slot = (r % 2) * 4 + r // 2
        else:
            slot = r
        packed |= value << (slot * BITS)
    tl.store(dst_ptr + word_row.to(tl.int64) * N + cols, packed, mask=ok)


def kernel(q_weight, q_perm, bit):  # noqa: ANN001, ANN201
    rows, n = q_weight.shape
    source = q_weight.clone()
    block = 128
    _shuffle_kernel[(rows, triton.cdiv(n, block))](
        source, q_weight, q_perm if q_perm.numel() else q_weight, n,
        HAS_PERM=q_perm.numel() > 0, BITS=int(bit), BLOCK_N=block)
    return None
