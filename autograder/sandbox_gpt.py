"""The small GPT that grading builds inside the sandbox (where ``attnlab`` does not exist).

``GPT_SETUP`` defines ``_GraderGPT(vocab_size, block_size, d_model, n_heads, n_layers)`` with the
same layout and ``state_dict`` names as ``attnlab.nn.GPT`` (pre-LN, GELU FFN, tied output layer,
learned positions), written with plain torch.  Used by set 08 (greedy decoding) and set 09 (training
step and run); ``autograder/tests/test_spec.py`` checks that it computes the same logits and loss as
``attnlab.nn.GPT`` with the same weights (parity).  One home: specs import it, never each other.
"""

GPT_SETUP = '''
class _GraderCfg:
    def __init__(self, vocab_size, block_size, d_model, n_heads, n_layers):
        self.vocab_size, self.block_size, self.d_model = vocab_size, block_size, d_model
        self.n_heads, self.n_layers = n_heads, n_layers


class _GraderBlock(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h = h
        self.norm1, self.norm3 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.self_attn = nn.Module()
        self.self_attn.w_q, self.self_attn.w_k = nn.Linear(d, d), nn.Linear(d, d)
        self.self_attn.w_v, self.self_attn.w_o = nn.Linear(d, d), nn.Linear(d, d)
        self.ffn = nn.Module()
        self.ffn.w_1, self.ffn.w_2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        B, L, d = x.shape
        a, hx = self.self_attn, self.norm1(x)
        q, k, v = (w(hx).view(B, L, self.h, d // self.h).transpose(1, 2) for w in (a.w_q, a.w_k, a.w_v))
        s = q @ k.transpose(-2, -1) / math.sqrt(d // self.h)
        s = s.masked_fill(~torch.ones(L, L, dtype=torch.bool).tril(), float("-inf"))
        x = x + a.w_o((s.softmax(-1) @ v).transpose(1, 2).reshape(B, L, d))
        return x + self.ffn.w_2(F.gelu(self.ffn.w_1(self.norm3(x))))


class _GraderGPT(nn.Module):
    def __init__(self, vocab_size, block_size, d_model, n_heads, n_layers):
        super().__init__()
        self.config = _GraderCfg(vocab_size, block_size, d_model, n_heads, n_layers)
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Module()
        self.pos_emb.emb = nn.Embedding(block_size, d_model)
        self.blocks = nn.ModuleList(_GraderBlock(d_model, n_heads) for _ in range(n_layers))
        self.norm_f = nn.LayerNorm(d_model)

    def forward(self, idx, targets=None):
        B, L = idx.shape
        if L > self.config.block_size:
            raise ValueError(f"context of {L} tokens exceeds block_size={self.config.block_size}; "
                             "crop to the last block_size tokens, e.g. idx[:, -block_size:]")
        x = self.tok_emb(idx) + self.pos_emb.emb(torch.arange(L))
        for block in self.blocks:
            x = block(x)
        logits = self.norm_f(x) @ self.tok_emb.weight.T
        loss = None if targets is None else F.cross_entropy(logits.reshape(B * L, -1), targets.reshape(B * L))
        return logits, loss
'''
