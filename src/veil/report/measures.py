"""What every measure in a release's report means, and which way is better, in one sentence each.

A data steward reads a report without the papers at hand: each privacy model's level, each
utility metric, each disclosure measure and the risk figures come with the sentence here. The
sentences state the definition the code computes (see each model's and metric's class) and end
with the direction that is better.
"""

from __future__ import annotations

# Per privacy model key (the keys of the manifest's models and of ``veil check``).
MODEL_MEANINGS = {
    "k": "the size of the smallest class: everyone shares their quasi-identifiers with at least k − 1 other "
         "records; higher is better.",
    "alpha": "the largest share one sensitive value holds in a class (α), the chance of guessing a member's value "
             "right; lower is better.",
    "l_distinct": "the fewest distinct sensitive values in a class; higher is better.",
    "l_entropy": "e to the smallest entropy of a class's sensitive values (ℓ equally common values give ℓ); higher "
                 "is better.",
    "c_l_recursive": "the largest ℓ such that in every class the most common sensitive value is rarer than c times "
                     "the values from the ℓ-th most common on; higher is better.",
    "t_equal": "the largest earth mover's distance between a class's sensitive values and the input table's, every "
               "two values 1 apart; lower is better.",
    "t_ordered": "the largest earth mover's distance between a class's sensitive values and the input table's, "
                 "values apart by their rank; lower is better.",
    "t_hierarchical": "the largest earth mover's distance between a class's sensitive values and the input table's, "
                      "values apart by the height of their lowest common group in the hierarchy; lower is better.",
    "delta": "the largest |log(p_class / p_table)| over the sensitive values a class holds, against the input "
             "table; lower is better.",
    "beta_basic": "the largest relative gain (p_class − p_table) / p_table of a sensitive value in a class; lower "
                  "is better.",
    "beta_enhanced": "the smallest β with every relative gain at most min(β, −ln p_table), infinite when a gain "
                     "exceeds −ln p_table; lower is better.",
    "delta_presence": "the largest chance f / F that a person of the population whose tuple is published is in "
                      "the table; lower is better.",
    "k_map": "the fewest population records a published class matches; higher is better.",
    "join": "the fewest candidates a record has once this release is joined with the earlier one; higher is "
            "better.",
}

# Per utility metric key (veil.metrics).
METRIC_MEANINGS = {
    "height": "the sum of the hierarchy levels of the quasi-identifiers (0 publishes the original values); lower "
              "is better.",
    "precision": "Sweeney's precision: 1 minus the mean share of its hierarchy each published value climbed, a "
                 "suppressed record climbing all of it; higher is better, 1 for the input.",
    "discernibility": "each published record costs the size of its class and each suppressed record the size of "
                      "the table, summed; lower is better.",
    "aecs": "the average class size, published records per published class; lower is better.",
    "loss": "the normalized certainty penalty: per record, the mean share of each quasi-identifier's range or "
            "values its cell covers, 1 for a suppressed record; lower is better, 0 for the input and 1 at the "
            "trivial release.",
    "entropy": "non-uniform entropy: the bits a reader lacks to tell each original value from its published cell; "
               "lower is better, 0 for the input.",
    "kl": "the KL-divergence from the input's distribution of quasi-identifiers to the one the release implies "
          "(records spread evenly within their cells); lower is better, 0 for the input.",
    "workload": "the mean relative error of random counting queries over the quasi-identifiers answered from the "
                "release; lower is better, 0 for the input.",
    "classification": "the share of records suppressed or not of their class's most common label; lower is better.",
    "ig_pl": "the information the classes carry about the label per unit of anonymity given up; higher is better.",
}

# The disclosure measures of Brickell and Shmatikov, as the report labels them.
DISCLOSURE_MEANINGS = {
    "A_know": "the knowledge gain: the mean total-variation distance between a record's class and the released "
              "table in the sensitive column; lower is better.",
    "A_acc": "the accuracy gain: how much more often guessing each class's most common value is right than "
             "guessing the released table's; lower is better.",
    "δ (against the released table)": "the largest |log(p_class / p_table)| with the released table, not the "
                                      "input, as the table: the adversary's own prior; lower is better.",
    "guessing accuracy before": "the chance of guessing a person's value right from the released table's most "
                                "common value alone; the baseline.",
    "guessing accuracy after": "the chance of guessing it right from the most common value of their class; the "
                               "closer to the baseline the better.",
}

RISK_MEANINGS = {
    "highest": "the largest chance that an adversary who knows a person is in the release picks their record, "
               "1 / (the smallest class size); lower is better.",
    "average": "the mean of that chance over the published records (classes / records); lower is better.",
    "at risk": "the share of the published records whose chance exceeds the risk threshold; lower is better.",
}

ATTACK_MEANING = ("Each attack counts the published records whose sensitive value the adversary learns or narrows "
                  "down, and the classes they are in; fewer is better.")


def model_meaning(key: str) -> str:
    """The sentence for a privacy model's level (an empty string for a key it does not know)."""
    return MODEL_MEANINGS.get(key, "")


def metric_meaning(key: str) -> str:
    """The sentence for a utility metric (an empty string for a key it does not know)."""
    return METRIC_MEANINGS.get(key, "")
