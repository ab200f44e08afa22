"""Plain transcription of the released two-step verb-sense clustering (reference for the tests
and the benchmark).

``ruyi101/multimodal-verb-sense-anonymous`` (commit 48d962c, "Official code for: Towards Robust
Evaluation of Visual Activity Recognition", Yao, Jarvis & Jiang): ``code/clustering_utils.py``
(``utils l.N``), ``code/clustering.py`` (``clustering l.N``), ``code/experiments.py``
(``experiments l.N``) and ``generate_final_results.ipynb`` (``notebook cell N``). The statements
are the original's; the only changes:

- no files: step 1 and step 2 take and return DataFrames (the CSV caching and writing,
  clustering l.19–25, 88–93, 104–108, 161–165, is left out), and ``embedding_file`` is a dict
  ``{(verb, image stem): vector}`` as ``load_mllama_embedding`` reads it (utils l.17–42; its
  missing-key branch, a zero vector with a warning, is left out);
- no progress bars (``tqdm``) and no dataset-specific sampling (clustering l.39–40 halves the
  verb ``standing`` of ``llama_90b_top5``);
- ``method`` / ``metric`` / ``linkage`` / ``min_clusters`` / ``max_clusters`` come in
  ``params`` as in experiments l.55–71: ``{"method": "kmeans", "metric": "cosine"}`` or
  ``{"method": "agglomerative", "metric": "cosine", "linkage": "complete"}``, with 2 and 16.

What the original does (the behaviour ``metrics/imsitu/_sense_clusters.py`` reproduces):

- step 1 (clustering l.27–94), per verb of ``df_rows['verbs'].unique()`` in order of first
  appearance, its rows in file order: embeddings of each (verb, image); for k = 2..16 the
  clustering and ``silhouette_score(embeddings, labels, metric='cosine')``, keeping the first
  k with the highest (``>``); then the clustering refitted at that k, its labels as column
  ``cluster``; a verb with fewer than 17 rows makes a fit or the silhouette fail;
- ``cluster_embeddings`` (utils l.48–85): K-Means on ``normalize(embeddings)`` with
  ``KMeans(n_clusters=k, random_state=42, n_init=10)``; HAC as
  ``AgglomerativeClustering(n_clusters=k, metric='cosine', linkage='complete')`` on the
  embeddings as given;
- step 2 (clustering l.110–159): ``groupby(['verbs', 'cluster']).agg(list)`` — rows sorted by
  verb, then by step-1 label; each row's point is ``np.mean`` of its members' embeddings;
  candidates ``sorted(set(int(num_verbs * scale) for scale in np.arange(0.6, 1.7, 0.1)))``;
  the same selection by silhouette; the labels as column ``final_cluster``;
- results (notebook cells 2–4): the verbs of each final cluster, and each image's targets as the
  set of the verbs of the final clusters of the rows that list it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.cluster import AgglomerativeClustering, KMeans
from sklearn.metrics import silhouette_score
from sklearn.preprocessing import normalize


def load_mllama_embedding(embedding_file, text, images):  # utils l.17–42
    if isinstance(images, str):
        images = [images]
    images = [image.split('.')[0] for image in images]
    embeddings = []
    for image in images:
        key = (text, image)
        embeddings.append(embedding_file[key])
    return np.mean(embeddings, axis=0)


def cluster_embeddings(embeddings, method='agglomerative', **kwargs):  # utils l.48–85
    embeddings = np.array(embeddings)
    metric = kwargs.get('metric', 'euclidean')
    if method == 'kmeans' and metric == 'cosine':
        embeddings = normalize(embeddings, norm='l2')
    if method == 'agglomerative':
        cluster_model = AgglomerativeClustering(
            n_clusters=kwargs.get('n_clusters', None),
            metric=metric,
            linkage=kwargs.get('linkage', 'complete'),
            distance_threshold=kwargs.get('distance_threshold', None)
        )
    elif method == 'kmeans':
        cluster_model = KMeans(
            n_clusters=kwargs.get('n_clusters', 8),
            random_state=kwargs.get('random_state', 42),
            n_init=10
        )
    else:
        raise ValueError(f"Unsupported clustering method: {method}")
    return cluster_model.fit_predict(embeddings)


def run_step1_clustering(embedding_file, df_rows, params):  # clustering l.13–94
    verbs = df_rows['verbs'].unique()
    all_clustering_results = []
    for verb in verbs:
        data = df_rows[df_rows['verbs'] == verb].copy()
        image_names = data['image'].tolist()
        texts = data['verbs'].tolist()
        embeddings = np.array([
            load_mllama_embedding(embedding_file, text=text, images=img) for text, img in zip(texts, image_names)
        ])
        best_silhouette = -1
        best_num_clusters = params['min_clusters']
        for num_clusters in range(params['min_clusters'], params['max_clusters'] + 1):
            clusters = cluster_embeddings(embeddings, method=params['method'], metric=params['metric'],
                                          linkage=params.get('linkage', None), n_clusters=num_clusters)
            score = silhouette_score(embeddings, clusters, metric=params['metric'])
            if score > best_silhouette:
                best_silhouette = score
                best_num_clusters = num_clusters
        clusters = cluster_embeddings(embeddings, method=params['method'], metric=params['metric'],
                                      linkage=params.get('linkage', None), n_clusters=best_num_clusters)
        data['cluster'] = clusters
        all_clustering_results.append(data)
    return pd.concat(all_clustering_results)


def run_step2_clustering(df_clustered, embedding_file, params):  # clustering l.99–166
    grouped_data = df_clustered.groupby(['verbs', 'cluster']).agg(list).reset_index()
    images = grouped_data['image'].tolist()
    texts = grouped_data['verbs'].tolist()
    embeddings_step2 = np.array([
        load_mllama_embedding(embedding_file, text=text, images=images)
        for images, text in zip(images, texts)
    ])
    num_verbs = len(df_clustered['verbs'].unique())
    cluster_candidates = [int(num_verbs * scale) for scale in np.arange(0.6, 1.7, 0.1)]
    cluster_candidates = sorted(set(cluster_candidates))
    best_silhouette_step2 = -1
    best_num_clusters_step2 = max(2, cluster_candidates[0])
    for num_clusters in cluster_candidates:
        clusters_step2 = cluster_embeddings(embeddings_step2, method=params['method'], metric=params['metric'],
                                            linkage=params.get('linkage', None), n_clusters=num_clusters)
        score = silhouette_score(embeddings_step2, clusters_step2, metric=params['metric'])
        if score > best_silhouette_step2:
            best_silhouette_step2 = score
            best_num_clusters_step2 = num_clusters
    clusters_step2 = cluster_embeddings(embeddings_step2, method=params['method'], metric=params['metric'],
                                        linkage=params.get('linkage', None), n_clusters=best_num_clusters_step2)
    grouped_data['final_cluster'] = clusters_step2
    return grouped_data


def image_targets(grouped):  # notebook cells 2–4
    clusters = grouped.groupby('final_cluster')[['verbs']].agg(list).reset_index()
    images = grouped.explode('image')[['image', 'final_cluster']]
    images = images.merge(clusters, on='final_cluster', how='left')
    images = images.groupby('image').agg(list).reset_index()
    images['targets'] = images['verbs'].apply(lambda x: list(set([item for sublist in x for item in sublist])))
    return dict(zip(images['image'], images['targets']))


def released_clustering(embedding_file, df_rows, method):
    """experiments l.55–92 for one method (``kmeans`` or ``agglomerative``): step 1 and step 2."""
    params = {'method': method, 'metric': 'cosine', 'linkage': 'complete' if method == 'agglomerative' else None,
              'min_clusters': 2, 'max_clusters': 16}
    df_clustered = run_step1_clustering(embedding_file, df_rows, params)
    return df_clustered, run_step2_clustering(df_clustered, embedding_file, params)
