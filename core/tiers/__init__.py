"""Head, torso and long tail: cut-offs from statement counts, stored tiers, the model's tail."""
