// Secrets: placeholder until the target lands.
