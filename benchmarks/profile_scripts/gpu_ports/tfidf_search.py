"""tfidf_search.py ported: the Python tokenising stays on the host (to line 21), the arrays from line 22 on are CuPy."""
from collections import Counter

import cupy as cp, numpy as np
import cupyx.scipy.sparse as sp

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
tf = sp.csr_matrix((cp.array(counts, dtype=cp.float64), cp.array(indices, dtype=cp.int32), cp.array(indptr, dtype=cp.int32)), shape=(len(documents), len(vocabulary))); np = cp

document_frequency = np.bincount(tf.indices, minlength=tf.shape[1])
idf = np.log((1 + tf.shape[0]) / (1 + document_frequency)) + 1.0
weighted = (tf @ sp.diags(idf)).tocsr()
norms = np.sqrt(np.asarray(weighted.multiply(weighted).sum(axis=1)).ravel())
unit = sp.diags(1.0 / norms) @ weighted

neighbours = []
for start in range(0, unit.shape[0], 250):
    similarity = (unit[start:start + 250] @ unit.T).toarray()
    np.fill_diagonal(similarity[:, start:start + 250], 0.0)
    top = np.argpartition(-similarity, 5, axis=1)[:, :5]
    neighbours.append(top)
print("pairs", sum(len(block) for block in neighbours))
