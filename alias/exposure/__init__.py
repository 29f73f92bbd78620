"""Experiment 2 of the ALIAS paper: controlled exposure by LoRA fine-tuning on disjoint
halves of the test set (Methods, Experiment 2; Appendices E, F, N, O, T).

``split``      the seeded split of the test set into halves A and B
``trainsets``  the training sets of the two arms (task-pair, specification-only), tokenized
               with the loss on the specification tokens only
``lora``       LoRA fine-tuning with the Appendix E settings (transformers + peft)
``loglik``     mean token log-likelihood of the reference, overall, outside the renamed
               identifiers and on them alone
``effects``    exposure effects and DiD on the likelihood (via ``alias.stats``)
``experiment`` the experiment's steps: split -> adapters -> samples -> loglik (stage ``exposure``)

Heavy imports (torch, transformers, peft) happen inside the functions that need them.
"""

from .split import HALVES, SPLIT_SEED, other_half, split_halves
from .trainsets import ARMS, build_training_set, epoch_orders, tokenize_example

__all__ = ["HALVES", "SPLIT_SEED", "other_half", "split_halves", "ARMS", "build_training_set", "epoch_orders",
           "tokenize_example"]
