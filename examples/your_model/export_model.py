#!/usr/bin/env python3
"""Build-time step: export a small model for examples/your_model to load.

The model is a two-layer MLP with a LayerNorm in front: x[B, 128] -> LayerNorm -> Linear(128, 256)
-> GELU -> Linear(256, 10). Writes into --out-dir:
  tiny_mlp.pt    TorchScript (torch.jit.trace; loads with torch::jit::load), always
  tiny_mlp.pt2   AOTInductor package (loads with AOTIModelPackageLoader), with --aoti only:
                 compiling it takes about a minute, so CI uses the TorchScript file.
Each file is written to a temporary name and renamed, so a failed export leaves no half file.
"""
import argparse
import os

import torch


class TinyMLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.LayerNorm(128)
        self.fc1 = torch.nn.Linear(128, 256)
        self.fc2 = torch.nn.Linear(256, 10)

    def forward(self, x):
        return self.fc2(torch.nn.functional.gelu(self.fc1(self.norm(x))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--aoti", action="store_true", help="also compile an AOTInductor package")
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu", help="device of the AOTI package")
    args = ap.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    torch.manual_seed(0)
    model = TinyMLP().eval()
    example = torch.randn(8, 128)

    path = os.path.join(args.out_dir, "tiny_mlp.pt")
    with torch.no_grad():
        traced = torch.jit.trace(model, example)
    traced.save(path + ".partial")
    os.replace(path + ".partial", path)
    print(f"wrote {path} (TorchScript, torch {torch.__version__})")

    if args.aoti:
        model, example = model.to(args.device), example.to(args.device)
        batch = torch.export.Dim("batch", min=1, max=4096)
        exported = torch.export.export(model, (example,), dynamic_shapes=({0: batch},))
        path = os.path.join(args.out_dir, "tiny_mlp.pt2")
        torch._inductor.aoti_compile_and_package(exported, package_path=path + ".partial.pt2")
        os.replace(path + ".partial.pt2", path)
        print(f"wrote {path} (AOTInductor, {args.device})")


if __name__ == "__main__":
    main()
