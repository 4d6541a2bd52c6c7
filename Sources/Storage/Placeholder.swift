// Storage: placeholder until the target lands.
