enum NetPlaceholder {}
