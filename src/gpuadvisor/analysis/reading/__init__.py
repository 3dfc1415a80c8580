"""Source in: bytes -> decoded text -> guarded LibCST module; notebooks and suppression comments."""
