"""conv_train.py on the GPU: the same lines with device = "cuda" (same line numbers)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(1)
device = "cuda"


class SmallCNN(nn.Module):
    def __init__(self, classes: int = 10) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 32, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(32)
        self.conv2 = nn.Conv2d(32, 64, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(64)
        self.head = nn.Linear(64 * 8 * 8, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
        return self.head(x.flatten(1))


images = torch.randn(2_048, 3, 32, 32, device=device)
labels = torch.randint(0, 10, (2_048,), device=device)
model = SmallCNN().to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
for epoch in range(2):
    for start in range(0, images.shape[0], 64):
        x, y = images[start:start + 64], labels[start:start + 64]
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
print(f"loss {loss.item():.3f}")
