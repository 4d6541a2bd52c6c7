// Gateway: placeholder until the target lands.
