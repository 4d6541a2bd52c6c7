// Accounts: placeholder until the target lands.
