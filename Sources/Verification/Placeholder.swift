// Verification: placeholder until the target lands.
