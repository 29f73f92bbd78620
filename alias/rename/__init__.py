"""CIR: consistent identifier renaming of TLA+ tasks (modules, cfg, descriptions).

``cir``           :func:`~alias.rename.cir.rename_task`, :class:`~alias.rename.cir.RenameResult`,
                  :func:`~alias.rename.cir.leftover_identifiers`, ``rename_names``
``names``         :class:`~alias.rename.names.NameGenerator` (same-length seeded names), ``RenameError``
``descriptions``  :func:`~alias.rename.descriptions.rename_description`
``corpus``        :func:`~alias.rename.corpus.rename_corpus`: a whole ingested corpus
``kinds``         identifier categories (Appendix C) and hidden required names
``meaningful``, ``meaningful_run``, ``proposers``  the meaningful-names condition (Appendix R)

(This file imports nothing, so that importing one module does not import the others.)
"""
