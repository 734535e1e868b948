"""The GPUs a tool may spread its processes over: those this host shows, and those a --gpus option names."""
import os
import shutil
import subprocess


def visible_gpus():
    """The GPUs this host shows: CUDA_VISIBLE_DEVICES' entries when it is set, else nvidia-smi's indices."""
    listed = os.environ.get("CUDA_VISIBLE_DEVICES")
    if listed is not None:
        return [g.strip() for g in listed.split(",") if g.strip()]
    if shutil.which("nvidia-smi") is None:
        return []
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"], capture_output=True,
                             text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [line.strip() for line in smi.stdout.splitlines() if line.strip()] if smi.returncode == 0 else []


def chosen_gpus(option, visible, no_gpu_hint=""):
    """The GPUs --gpus names (each one this host shows, none twice), else every visible one; ValueError with
    one line naming the problem otherwise (`no_gpu_hint` ends the line when the host shows none)."""
    if option is None:
        return visible
    named = [g.strip() for g in option.split(",") if g.strip()]
    if not named:
        raise ValueError(f"--gpus {option!r}: name GPU indices or UUIDs, comma-separated (this host shows: "
                         f"{','.join(visible) or 'none'})")
    if not visible:
        raise ValueError(f"--gpus {option}: this host shows no GPU (nvidia-smi, CUDA_VISIBLE_DEVICES){no_gpu_hint}")
    unknown = [g for g in named if g not in visible]
    if unknown or len(set(named)) != len(named):
        what = f"{','.join(unknown)} not among" if unknown else "a GPU named twice; each once of"
        raise ValueError(f"--gpus {option}: {what} this host's GPUs ({','.join(visible)})")
    return named
