"""text_classifier.py on the GPU: the same lines with device = "cuda" (same line numbers)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(2)
device = "cuda"
vocab, width, length, classes = 5_000, 128, 64, 5


class Classifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.blocks = nn.ModuleList(
            nn.TransformerEncoderLayer(width, 4, 4 * width, dropout=0.1, batch_first=True) for _ in range(2)
        )
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, classes)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        h = self.embed(tokens)
        for block in self.blocks:
            h = block(h)
        return self.head(self.norm(h.mean(dim=1)))


tokens = torch.randint(0, vocab, (1_024, length), device=device)
labels = torch.randint(0, classes, (1_024,), device=device)
model = Classifier().to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)
for epoch in range(2):
    for start in range(0, tokens.shape[0], 32):
        logits = model(tokens[start:start + 32])
        loss = F.cross_entropy(logits, labels[start:start + 32])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
print(f"loss {loss.item():.3f}")
