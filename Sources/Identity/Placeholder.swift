// Identity: placeholder until the target lands.
