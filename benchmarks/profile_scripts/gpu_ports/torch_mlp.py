"""torch_mlp.py on the GPU: the same lines with the data and the model on CUDA (same line numbers)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self, d_in: int, hidden: int, classes: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.relu(self.fc1(x))
        h = F.relu(self.fc2(h))
        return self.out(h)


features = torch.randn(16_384, 256, device="cuda")
targets = (features[:, :10].sum(dim=1) > 0).long() + 2 * (features[:, 10:20].sum(dim=1) > 0).long()
model = Net(256, 512, 4).cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
batch = 512
for epoch in range(4):
    order = torch.randperm(features.shape[0], device="cuda")
    for start in range(0, features.shape[0], batch):
        idx = order[start:start + batch]
        logits = model(features[idx])
        loss = F.cross_entropy(logits, targets[idx])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
print(f"loss {loss.item():.3f}")
