"""The Triton kernels of word2vec's fused path (engine.models.word2vec.fused, which imports this module only where
Triton is installed): ``ns_update``, a group's input vectors against their targets and the group's noise pool,
shared by ``sgns_groups`` (skip-gram: one input word a pair) and ``cbow_groups`` (CBOW: an example's context words
added up or averaged). Module-level functions: Triton finds a kernel's callees among its module's globals."""

import importlib.util

if importlib.util.find_spec("triton") is not None:  # (without Triton the module is empty: fused.available says no)
    import triton
    import triton.language as tl

    @triton.jit
    def ns_update(syn1, v, i_out, i_neg, cols, dim, keep, lr, scale):
        """A group's g input vectors ``v`` (G, D) against their targets and the group's pool: the output rows'
        updates added (atomically), the inputs' gradient and each pair's log-likelihood returned."""
        p_out = syn1 + i_out[:, None] * dim + cols[None, :]
        p_neg = syn1 + i_neg[:, None] * dim + cols[None, :]
        # through L2, past the multiprocessor's own cache: rows change under other programs' atomic adds
        u = tl.load(p_out, mask=keep, other=0.0, cache_modifier=".cg")  # (G, D)
        noise = tl.load(p_neg, mask=keep, other=0.0, cache_modifier=".cg")  # (M, D)
        sig_pos = tl.sigmoid(tl.sum(v * u, axis=1))  # (G,)
        sig_neg = tl.sigmoid(tl.dot(v, tl.trans(noise), input_precision="ieee"))  # (G, M)
        g_pos = (1.0 - sig_pos) * lr
        g_neg = tl.where(i_neg[None, :] == i_out[:, None], 0.0, sig_neg * (-lr * scale))
        grad_v = g_pos[:, None] * u + tl.dot(g_neg, noise, input_precision="ieee")
        tl.atomic_add(p_out, g_pos[:, None] * v, mask=keep, sem="relaxed")
        tl.atomic_add(p_neg, tl.dot(tl.trans(g_neg), v, input_precision="ieee"), mask=keep, sem="relaxed")
        return grad_v, tl.log(sig_pos + 1e-7) + scale * tl.sum(tl.log(1.0 + 1e-7 - sig_neg), axis=1)

    @triton.jit
    def sgns_groups(syn0, syn1, inp, out, negs, losses, n_groups, lr0, lr_drop, scale, dim,
                    n_programs, n_iter, G: tl.constexpr, M: tl.constexpr, BLOCK_D: tl.constexpr):
        pid = tl.program_id(0)
        cols = tl.arange(0, BLOCK_D)
        in_dim = cols < dim
        total = tl.zeros((G,), dtype=tl.float32)
        for it in range(0, n_iter):
            gid = it * n_programs + pid
            live = gid < n_groups  # the last round: some programs have no group left
            lr = lr0 - lr_drop * gid / n_groups
            pr = gid * G + tl.arange(0, G)
            i_in = tl.load(inp + pr, mask=live, other=0)
            i_out = tl.load(out + pr, mask=live, other=0)
            i_neg = tl.load(negs + gid * M + tl.arange(0, M), mask=live, other=0)
            keep = in_dim[None, :] & live
            p_in = syn0 + i_in[:, None] * dim + cols[None, :]
            v = tl.load(p_in, mask=keep, other=0.0, cache_modifier=".cg")  # (G, D)
            grad_v, loss = ns_update(syn1, v, i_out, i_neg, cols, dim, keep, lr, scale)
            tl.atomic_add(p_in, grad_v, mask=keep, sem="relaxed")
            total += tl.where(live, loss, 0.0)
        tl.store(losses + pid * G + tl.arange(0, G), -total)

    @triton.jit
    def cbow_groups(syn0, syn1, ctx, out, negs, losses, n_groups, lr0, lr_drop, scale, dim,
                    n_programs, n_iter, G: tl.constexpr, M: tl.constexpr, C: tl.constexpr, MEAN: tl.constexpr,
                    BLOCK_D: tl.constexpr):
        pid = tl.program_id(0)
        cols = tl.arange(0, BLOCK_D)
        in_dim = cols < dim
        total = tl.zeros((G,), dtype=tl.float32)
        for it in range(0, n_iter):
            gid = it * n_programs + pid
            live = gid < n_groups
            lr = lr0 - lr_drop * gid / n_groups
            pr = gid * G + tl.arange(0, G)
            i_out = tl.load(out + pr, mask=live, other=0)
            i_neg = tl.load(negs + gid * M + tl.arange(0, M), mask=live, other=0)
            keep = in_dim[None, :] & live
            h = tl.zeros((G, BLOCK_D), dtype=tl.float32)  # each example's context words, added up
            count = tl.zeros((G,), dtype=tl.float32)
            for c in tl.static_range(C):  # slot c of every example of the group (-1: no word there)
                i_c = tl.load(ctx + pr * C + c, mask=live, other=-1)
                has = i_c >= 0
                h += tl.load(syn0 + tl.where(has, i_c, 0)[:, None] * dim + cols[None, :], mask=keep & has[:, None],
                             other=0.0, cache_modifier=".cg")
                count += tl.where(has, 1.0, 0.0)
            if MEAN:
                h = h / tl.maximum(count, 1.0)[:, None]
            grad_h, loss = ns_update(syn1, h, i_out, i_neg, cols, dim, keep, lr, scale)
            for c in tl.static_range(C):  # the whole gradient to each context word (gensim's cbow_mean too)
                i_c = tl.load(ctx + pr * C + c, mask=live, other=-1)
                has = i_c >= 0
                tl.atomic_add(syn0 + tl.where(has, i_c, 0)[:, None] * dim + cols[None, :], grad_h,
                              mask=keep & has[:, None], sem="relaxed")
            total += tl.where(live, loss, 0.0)
        tl.store(losses + pid * G + tl.arange(0, G), -total)
