"""The training loss as logged, for both trainers' manifests (the final logged loss is what they record)."""

from __future__ import annotations


def loss_log():
    """A transformers ``TrainerCallback`` that keeps every logged ``loss`` in its ``losses`` list.

    Built on call so that importing this module does not import transformers."""
    from transformers import TrainerCallback

    class LossLog(TrainerCallback):
        def __init__(self) -> None:
            self.losses: list[float] = []

        def on_log(self, args, state, control, logs=None, **kw):  # noqa: ARG002 - the callback signature
            if logs and "loss" in logs:
                self.losses.append(float(logs["loss"]))

    return LossLog()


def final_loss(log, training_loss: float) -> float:
    """The last logged loss, else the run's mean training loss (a run shorter than one logging step)."""
    return round(log.losses[-1] if log.losses else float(training_loss), 4)
