-- A run's conclusions drawn: the attempt whose paired comparisons,
-- regression check and webhooks its score job (or, when its quality came
-- later from the sandbox or a judging, the step that followed) has done.
-- A benchmark is concluded once each completed run is, or nothing is
-- left that would conclude it (docs/verdict.md#when-a-verdict-is-final).
-- NULL: not concluded, or queued again for a rescoring. Written by the
-- server alone; agents are granted nothing on it.
ALTER TABLE runs ADD COLUMN concluded_attempt integer;
