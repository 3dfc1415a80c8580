"""A training loop that keeps the GPU busy: everything here is done the recommended way."""

import time

import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def train(model: nn.Module, loader, epochs: int = 10) -> None:
    model = model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    criterion = nn.MSELoss()
    for epoch in range(epochs):
        total = torch.zeros((), device=device)
        for step, (x, y) in enumerate(loader):
            x = x.to(device, non_blocking=True)
            y = y.to(device, non_blocking=True)
            optimizer.zero_grad(set_to_none=True)
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            total += loss.detach()
            if step % 200 == 0:
                print(f"epoch {epoch} step {step}: {loss.item():.4f}")
        print(f"epoch {epoch}: mean loss {total.item() / (step + 1):.4f}")


def time_forward(model: nn.Module, batch: torch.Tensor, repeats: int = 50) -> float:
    batch = batch.to(device)
    for _ in range(5):
        model(batch)
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(repeats):
        model(batch)
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / repeats
