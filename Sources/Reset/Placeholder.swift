// Reset: placeholder until the target lands.
