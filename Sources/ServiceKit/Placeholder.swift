// ServiceKit placeholder
