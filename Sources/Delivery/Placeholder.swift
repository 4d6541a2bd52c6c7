// Delivery: placeholder until the target lands.
