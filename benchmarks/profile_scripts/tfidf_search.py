"""Near-duplicate search over a synthetic corpus: tokenise, TF-IDF (scipy.sparse), cosine top-k."""
from collections import Counter

import numpy as np
import scipy.sparse as sp

rng = np.random.default_rng(7)
vocabulary = [f"w{index}" for index in range(6_000)]
popularity = 1.0 / np.arange(1, len(vocabulary) + 1) ** 1.1
popularity /= popularity.sum()
lengths = rng.integers(60, 240, size=5_000)
word_ids = rng.choice(len(vocabulary), size=int(lengths.sum()), p=popularity)
documents = [" ".join(vocabulary[i] for i in ids) for ids in np.split(word_ids, np.cumsum(lengths)[:-1])]

word_index = {word: index for index, word in enumerate(vocabulary)}
indptr, indices, counts = [0], [], []
for text in documents:
    tally = Counter(word_index[word] for word in text.split())
    indices.extend(tally.keys())
    counts.extend(tally.values())
    indptr.append(len(indices))
tf = sp.csr_matrix((np.array(counts, dtype=np.float64), indices, indptr), shape=(len(documents), len(vocabulary)))

document_frequency = np.bincount(tf.indices, minlength=tf.shape[1])
idf = np.log((1 + tf.shape[0]) / (1 + document_frequency)) + 1.0
weighted = tf.multiply(idf).tocsr()
norms = np.sqrt(np.asarray(weighted.multiply(weighted).sum(axis=1)).ravel())
unit = sp.diags(1.0 / norms) @ weighted

neighbours = []
for start in range(0, unit.shape[0], 250):
    similarity = (unit[start:start + 250] @ unit.T).toarray()
    np.fill_diagonal(similarity[:, start:start + 250], 0.0)
    top = np.argpartition(-similarity, 5, axis=1)[:, :5]
    neighbours.append(top)
print("pairs", sum(len(block) for block in neighbours))
