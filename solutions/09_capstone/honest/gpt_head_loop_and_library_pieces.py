# TinyGPT written differently: a loop over heads with weight slices, a finite fill, torch.where, F.layer_norm by hand,
# an explicit tied nn.functional.linear and positions broadcast from an index.
# %% cell: tiny_gpt
class CausalSelfAttention(nn.Module):
    """Heads one at a time."""

    def __init__(self, d_model: int, n_heads: int) -> None:
        super().__init__()
        self.n_heads, self.d_k = n_heads, d_model // n_heads
        self.w_q, self.w_k = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.w_v, self.w_o = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def forward(self, x: Tensor) -> Tensor:
        L = x.shape[1]
        allowed = torch.arange(L)[:, None] >= torch.arange(L)[None, :]
        heads = []
        for h in range(self.n_heads):
            cols = slice(h * self.d_k, (h + 1) * self.d_k)
            q = F.linear(x, self.w_q.weight[cols], self.w_q.bias[cols])
            k = F.linear(x, self.w_k.weight[cols], self.w_k.bias[cols])
            v = F.linear(x, self.w_v.weight[cols], self.w_v.bias[cols])
            s = torch.einsum("bld,bsd->bls", q, k) * self.d_k ** -0.5
            s = torch.where(allowed, s, torch.full_like(s, -1e9))
            heads.append(torch.softmax(s, dim=2) @ v)
        return self.w_o(torch.cat(heads, dim=-1))


class Block(nn.Module):
    """Pre-LN with F.layer_norm."""

    def __init__(self, d_model: int, n_heads: int) -> None:
        super().__init__()
        self.norm1, self.attn = nn.LayerNorm(d_model), CausalSelfAttention(d_model, n_heads)
        self.norm2 = nn.LayerNorm(d_model)
        self.w_1, self.w_2 = nn.Linear(d_model, 4 * d_model), nn.Linear(4 * d_model, d_model)

    def forward(self, x: Tensor) -> Tensor:
        d = x.shape[-1]
        x = x + self.attn(F.layer_norm(x, (d,), self.norm1.weight, self.norm1.bias))
        hidden = self.w_1(F.layer_norm(x, (d,), self.norm2.weight, self.norm2.bias))
        return x + self.w_2(0.5 * hidden * (1 + torch.erf(hidden / math.sqrt(2))))


class TinyGPT(nn.Module):
    """Tied head through F.linear."""

    def __init__(self, vocab_size: int, block_size: int, d_model: int, n_heads: int, n_layers: int) -> None:
        super().__init__()
        self.tok_emb, self.pos_emb = nn.Embedding(vocab_size, d_model), nn.Embedding(block_size, d_model)
        self.blocks = nn.ModuleList(Block(d_model, n_heads) for _ in range(n_layers))
        self.norm_f = nn.LayerNorm(d_model)

    def forward(self, idx: Tensor) -> Tensor:
        x = self.tok_emb(idx) + self.pos_emb.weight[: idx.shape[1]]
        for block in self.blocks:
            x = block(x)
        return F.linear(self.norm_f(x), self.tok_emb.weight)
