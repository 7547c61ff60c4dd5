// placeholder until the maths lands
