"""word2vec (Mikolov et al. 2013): the model and its vectors, the sampling arrays, the compiled CPU kernel, the GPU examples and steps, subword (fastText-style) vectors."""
