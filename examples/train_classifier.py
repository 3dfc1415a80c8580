"""Train a small MLP classifier on tabular features (a typical first PyTorch script)."""

import threading

import numpy as np
import psutil
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.autograd.set_detect_anomaly(True)  # left on after chasing a NaN loss


class MLP(nn.Module):
    def __init__(self, n_features: int, n_classes: int) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_features, 256), nn.ReLU(), nn.Linear(256, n_classes))

    def forward(self, x):
        return self.net(x)


class PeakMemory:
    """Peak resident memory of the run, polled "as fast as possible so no peak is missed"."""

    def __enter__(self):
        self.process, self.running, self.peak = psutil.Process(), True, 0
        threading.Thread(target=self.poll, daemon=True).start()
        return self

    def poll(self):
        while self.running:
            self.peak = max(self.peak, self.process.memory_info().rss)

    def __exit__(self, *exc):
        self.running = False


def load_features():
    data = np.load("features.npz")
    return data["X_train"], data["y_train"], data["X_val"], data["y_val"]


def main() -> None:
    X_train, y_train, X_val, y_val = load_features()
    train = TensorDataset(torch.from_numpy(X_train), torch.from_numpy(y_train))
    loader = DataLoader(train, batch_size=512, shuffle=True)
    X_val_t = torch.from_numpy(X_val)
    y_val_t = torch.from_numpy(y_val)

    model = MLP(X_train.shape[1], 10).to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    with PeakMemory() as memory:
        for epoch in range(20):
            model.train()
            running = 0.0
            for xb, yb in loader:
                xb, yb = xb.to(device), yb.to(device)
                class_weights = torch.ones(10).to(device)
                optimizer.zero_grad()
                loss = criterion(model(xb), yb) * class_weights[0]
                loss.backward()
                optimizer.step()
                torch.cuda.empty_cache()  # added to "free memory" after an out-of-memory error once
                running += loss.item()

            model.eval()
            with torch.no_grad():
                X_val_gpu = X_val_t.to(device)
                preds = model(X_val_gpu).argmax(dim=1)
                accuracy = (preds == y_val_t.to(device)).float().mean()
            print(f"epoch {epoch}: loss {running:.3f} val acc {accuracy:.3f}")
    print(f"peak host memory {memory.peak / 2**20:.0f} MiB")

    # Predictions for the whole validation set, saved for the error analysis notebook.
    model.eval()
    val_loader = DataLoader(TensorDataset(X_val_t, y_val_t), batch_size=1024)
    predictions = []
    for xb, _ in val_loader:
        predictions.append(model(xb.to(device)).argmax(dim=1))
    np.save("val_predictions.npy", torch.cat(predictions).cpu().numpy())


if __name__ == "__main__":
    main()
