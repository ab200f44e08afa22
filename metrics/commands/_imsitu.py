"""``python -m metrics imsitu``: imSitu Top-1 / Top-5 verb accuracy under the gold, WordNet-synonym
and sense-cluster criteria, and the Top-1 improvement breakdown (Tables 3–4)."""

from __future__ import annotations

from metrics.api import sense_accuracy
from metrics.core._options import input_file, input_path
from metrics.imsitu._accuracy import accuracy_text


def add_arguments(parser) -> None:
    parser.add_argument("--gold", type=input_file, help="JSON image -> gold verb (or list of verbs); omitted: taken "
                                       "from imSitu image names <verb>_<n>.jpg")
    parser.add_argument("--pred", required=True, type=input_path, help="JSON image -> ranked predicted verbs, or a "
                                                      "folder of imSitu *.predictions files")
    parser.add_argument("--clusters", type=input_file,
                        help='JSON {"clusters": {id: [verbs]}, "images": {image: [ids]}}, the released results JSON '
                             "{image: [target verbs]}, or the released step-2 CSV (.csv: verbs,cluster,image,…,final_cluster)")
    parser.add_argument("--include-gold", action="store_true",
                        help="cluster criterion: also count the image's gold verbs as targets (default: "
                             "only the verbs of the image's clusters, as the paper defines it, §4.2)")


def run(args):
    result = sense_accuracy(args.gold, args.pred, clusters=args.clusters, include_gold=args.include_gold).to_dict()
    text = accuracy_text(result)
    if not args.gold:
        text = "gold verbs taken from the image names\n" + text
    return result, text
