"""The objects a configuration file describes: plain, validated data that builds veil's objects
on demand.

:class:`AnonymizationConfig` holds the table's path, the roles of its columns, one
:class:`HierarchySpec` per hierarchy, one :class:`ModelSpec` per privacy model, the
:class:`MetricSpec`, the :class:`AlgorithmSpec` and the :class:`OutputSpec`, and for
``veil marginals`` a :class:`MarginalsSpec`. Nothing is read or built until asked
(:meth:`~AnonymizationConfig.dataset`, :meth:`~AnonymizationConfig.models`,
:meth:`~AnonymizationConfig.metric`, :meth:`~AnonymizationConfig.anonymizer`), so loading a file
only reads the header of its table. Each spec keeps ``origin``, the ``file, line N`` it was
written at, so that an error found when it is built still names that line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from veil.errors import ConfigError, ParameterError, VeilError, lower_first

if TYPE_CHECKING:
    from veil.config.synth_section import SynthSpec


@dataclass(frozen=True)
class HierarchySpec:
    """How to get one column's hierarchy: an ARX file or a builder with its options.

    Attributes:
        column: the column.
        kind: ``"file"`` or a builder: ``"intervals"``, ``"masking"``, ``"dates"``, ``"flat"``.
        options: the builder's keyword arguments (for a file: its ``delimiter``).
        path: the hierarchy file, resolved (``None`` for a builder).
        origin: where it was written, ``"<config>, line <n>"``, for error messages.
    """

    column: str
    kind: str
    options: Mapping[str, Any] = field(default_factory=dict)
    path: Path | None = None
    origin: str = ""

    def build(self, values=None, missing_values=("",)):
        """The :class:`veil.Hierarchy`: the file read, or the builder run on ``values``.

        Args:
            values: the column's values (a builder's input; unused for a file).
            missing_values: the configuration's cell texts that mean "missing"; a builder makes
                no leaf for them (the dataset keeps them as its missing category).

        Raises:
            ConfigError: the file or the builder fails (the message names the config line).
        """
        from veil.data import builders
        from veil.data.hierarchy import Hierarchy

        try:
            if self.kind == "file":
                return Hierarchy.read_csv(self.path, **self.options)
            missing = {"missing_values": tuple(missing_values)}
            if self.kind == "intervals":
                return builders.intervals(values, **self.options, **missing)
            if self.kind == "masking":
                return builders.masking(values, **self.options, **missing)
            if self.kind == "dates":
                options = dict(self.options)
                units = options.pop("units", ("month", "year"))
                return builders.dates(values, units, **options, **missing)
            return builders.flat(values, **self.options, **missing)
        except VeilError as exc:
            raise ConfigError(f"{self.origin}: the hierarchy of '{self.column}' cannot be built: "
                              f"{lower_first(str(exc))}") from None

    def to_dict(self) -> dict:
        if self.kind == "file":
            return {"file": str(self.path), **self.options}
        return {self.kind: _plain(self.options)}


@dataclass(frozen=True)
class ModelSpec:
    """One privacy model: its config name (``k_anonymity`` ...), its :mod:`veil.models` class and
    its options."""

    name: str
    cls: str
    options: Mapping[str, Any] = field(default_factory=dict)
    origin: str = ""

    def build(self):
        """The :class:`veil.PrivacyModel`.

        Raises:
            ConfigError: the model refuses its parameters.
        """
        import veil.models

        cls = getattr(veil.models, self.cls)
        try:
            return cls(**self.options)
        except ParameterError as exc:
            raise ConfigError(f"{self.origin}: {self.name}: {lower_first(str(exc))}") from None

    def to_dict(self) -> dict:
        return {self.name: _plain(self.options)}


@dataclass(frozen=True)
class MetricSpec:
    """The utility metric the search minimizes: a key of ``veil.metrics.make_metric`` and options."""

    name: str = "loss"
    options: Mapping[str, Any] = field(default_factory=dict)
    origin: str = ""

    def to_dict(self) -> dict:
        return {"name": self.name, **_plain(self.options)}


@dataclass(frozen=True)
class AlgorithmSpec:
    """The anonymization algorithm: its config name, its :mod:`veil.anonymize` class and its
    options (``search``, ``time_limit`` for full-domain)."""

    name: str = "fulldomain"
    cls: str = "FullDomain"
    options: Mapping[str, Any] = field(default_factory=dict)
    origin: str = ""

    def to_dict(self) -> dict:
        return {"name": self.name, **_plain(self.options)}


@dataclass(frozen=True)
class OutputSpec:
    """How the release is written.

    Attributes:
        suppressed: ``"remove"`` drops suppressed records; ``"star"`` keeps them with every
            quasi-identifier replaced by ``*``.
        shuffle: shuffle the released rows (the default), with the secure source unless a seed
            is given, so that two releases of one table cannot be joined by position; ``False``
            keeps the input order, which the manifest and the ledger's gate flag.
        seed: seed of the shuffle (``None``: the secure source; a seed is for experiments only).
        spreadsheet_guard: write ``'`` before every text cell a spreadsheet would run as a
            formula (see :mod:`veil.spreadsheet`); the manifest says so.
    """

    suppressed: str = "remove"
    shuffle: bool = True
    seed: int | None = None
    spreadsheet_guard: bool = False

    def to_dict(self) -> dict:
        return {"suppressed": self.suppressed, "shuffle": self.shuffle, "seed": self.seed,
                "spreadsheet_guard": self.spreadsheet_guard}


@dataclass(frozen=True)
class EngineSpec:
    """Where the table's records are read and counted (see :mod:`veil.engines`).

    Attributes:
        name: ``"local"`` (the table in memory) or ``"spark"``.
        master: the Spark master: ``local[*]``, ``local[N]``, ``spark://host:port``, ``yarn``, ``k8s://…``.
        config: Spark settings, each name → its value as text.
    """

    name: str = "local"
    master: str = "local[*]"
    config: Mapping[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"name": self.name, "master": self.master, "config": dict(self.config)}


@dataclass(frozen=True)
class PopulationSpec:
    """A population the publishing policy defines (see :class:`veil.ledger.policy.PopulationPolicy`).

    Attributes:
        name: its name.
        key: the column naming a person in every table of it, or ``None`` (it is one table).
        budget: its privacy budget ``(epsilon, delta)``, under zcdp composition ``(rho, delta)``
            (the budget in ρ and the δ it is stated at), or ``None``.
        composition: the rule that counts the budget: sequential, advanced, temporal, window or zcdp.
        delta_prime: advanced composition's δ'.
        discount: temporal composition's ``(exponential|hyperbolic, parameter)``.
        window: window composition's w.
        relation: the neighbouring relation (``add-remove`` or ``substitute``).
        unit: the ID column of the person its budget protects, or ``None`` (each row).
    """

    name: str
    key: str | None = None
    budget: tuple[float, float] | None = None
    composition: str = "sequential"
    delta_prime: float | None = None
    discount: tuple[str, float] | None = None
    window: int | None = None
    relation: str = "add-remove"
    unit: str | None = None

    def to_dict(self) -> dict:
        amount = "rho" if self.composition == "zcdp" else "epsilon"  # the rule's measure names the number
        return {"key": self.key, "budget": None if self.budget is None else {amount: self.budget[0],
                                                                            "delta": self.budget[1]},
                "composition": self.composition, "delta_prime": self.delta_prime,
                "discount": None if self.discount is None else {self.discount[0]: self.discount[1]},
                "window": self.window, "relation": self.relation,
                **({"unit": {"person": self.unit}} if self.unit is not None else {})}


@dataclass(frozen=True)
class PolicySpec:
    """The ``policy:`` section: what the publishing gate enforces (``veil publish --policy``).

    Attributes:
        recheck: check a release's own models on its published file.
        checks: per cross-release check (a key of :data:`veil.config.schema.CHECKS`), its
            thresholds; every check is listed, with its defaults where the file gives none.
        populations: the populations it defines.
        origin: where it was read (``file, line N``), for messages.
        single: per check of the release alone the file gives (a key of
            :data:`veil.ledger.checks.SINGLE_CHECKS`, e.g. ``presence``), its options.
    """

    recheck: bool = True
    checks: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    populations: tuple[PopulationSpec, ...] = ()
    origin: str = ""
    single: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"recheck": self.recheck, "composition": {name: dict(options) for name, options in self.checks.items()},
                "populations": {p.name: p.to_dict() for p in self.populations},
                **{name: dict(options) for name, options in self.single.items()}}


@dataclass(frozen=True)
class MarginalModelSpec:
    """One privacy model of a collection of marginals: its config name (``k_link``,
    ``k_combinatorial``, ``maxent_l_diversity``) and its options; ``veil marginals`` builds it."""

    name: str
    options: Mapping[str, Any] = field(default_factory=dict)
    origin: str = ""

    def to_dict(self) -> dict:
        return {self.name: _plain(self.options)}


@dataclass(frozen=True)
class GivenMarginalSpec:
    """A marginal the configuration names: its attributes and the level of each (0 when not
    given). ``origin`` is where it was written."""

    attributes: tuple[str, ...]
    levels: Mapping[str, int] = field(default_factory=dict)
    origin: str = ""

    def to_dict(self) -> dict:
        return {"attributes": list(self.attributes), "levels": dict(self.levels)}


@dataclass(frozen=True)
class MarginalsSpec:
    """The ``marginals`` section: anonymized marginals to publish with ``veil marginals``
    (Kifer and Gehrke, SIGMOD 2006).

    Attributes:
        privacy: the privacy models the whole collection must satisfy.
        sensitive: the sensitive column the marginals hold (``None``: the one declared).
        base: the anonymized table the collection starts from: ``"optimal"`` (veil's optimal
            full-domain generalization under ``models``, without suppression, for the
            KL-divergence), ``"none"``, or a :class:`GivenMarginalSpec` of its quasi-identifiers'
            levels.
        publish: marginals to publish as given.
        search: the greedy search's options (``max_marginals``, ``max_attributes``,
            ``max_cells``), or ``None`` for no search.
        maxent: the max-ent estimate's options (``max_cells``, ``tolerance``, ``max_iterations``).
    """

    privacy: tuple[MarginalModelSpec, ...]
    sensitive: str | None = None
    base: Any = "optimal"
    publish: tuple[GivenMarginalSpec, ...] = ()
    search: Mapping[str, Any] | None = None
    maxent: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"privacy": [spec.to_dict() for spec in self.privacy], "sensitive": self.sensitive,
                "base": self.base if isinstance(self.base, str) else dict(self.base.levels),
                "publish": [spec.to_dict() for spec in self.publish],
                "search": None if self.search is None else dict(self.search), "maxent": dict(self.maxent)}


@dataclass(frozen=True)
class AnonymizationConfig:
    """A validated anonymization configuration.

    Paths are resolved (relative ones against the configuration file's folder). Nothing is built
    until asked: :meth:`dataset`, :meth:`models`, :meth:`metric` and :meth:`anonymizer`.
    """

    data: Path
    quasi_identifiers: tuple[str, ...]
    sensitive: tuple[str, ...] = ()
    identifying: tuple[str, ...] = ()
    weight: str | None = None
    strata: tuple[str, ...] = ()
    household: str | None = None
    delimiter: str | None = None
    missing_values: tuple[str, ...] = ("",)
    hierarchies: Mapping[str, HierarchySpec] = field(default_factory=dict)
    orders: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    model_specs: tuple[ModelSpec, ...] = ()
    suppression_limit: float = 0.0
    metric_spec: MetricSpec = MetricSpec()
    algorithm: AlgorithmSpec = AlgorithmSpec()
    output: OutputSpec = OutputSpec()
    engine: EngineSpec = EngineSpec()
    policy: PolicySpec | None = None
    marginals: MarginalsSpec | None = None
    synth: SynthSpec | None = None
    name: str | None = None
    source: Path | None = None

    @property
    def dataset_name(self) -> str:
        """The table's name: the configuration's ``name``, else the data file's name without its
        extension (what a release's manifest and report show)."""
        return self.name if self.name is not None else self.data.stem

    def dataset(self, engine=None):
        """The :class:`veil.Dataset`: the table read once, the hierarchies read or built.

        Args:
            engine: an engine object of :mod:`veil.engines` to read the table with (its
                ``dataset`` method); ``None`` reads it here, in memory. With an engine, builders
                get the column's distinct values, which give them the same hierarchy.

        Raises:
            DataError: the table cannot be read.
            ConfigError: a hierarchy cannot be built, or a hierarchy file does not cover its column.
        """
        from veil.data.dataset import Dataset
        from veil.data.io import read_table
        from veil.errors import HierarchyError

        if engine is not None:
            metric = self.metric()
            also = [name for name in getattr(metric, "track", ()) if name not in self.sensitive]
            try:
                dataset = engine.dataset(self.data, quasi_identifiers=list(self.quasi_identifiers),
                                      sensitive=list(self.sensitive), identifying=list(self.identifying),
                                      hierarchies={name: self._builder(name) for name in self.hierarchies},
                                      orders={k: list(v) for k, v in self.orders.items()},
                                         missing_values=self.missing_values, delimiter=self.delimiter, also=also)
            except HierarchyError as exc:
                raise ConfigError(str(exc)) from None
            dataset.name = self.dataset_name
            return dataset
        # The role columns are read straight into codes (what the Dataset encodes anyway).
        table = read_table(self.data, self.delimiter, dictionary=[*self.quasi_identifiers, *self.sensitive])
        hierarchies = {}
        for name, spec in self.hierarchies.items():
            values = None if spec.kind == "file" else self._with_populations(name, table.data.column(name))
            hierarchies[name] = spec.build(values, self.missing_values)
        # A file that does not cover its column is found when the dataset aligns it; the
        # hierarchies were made here, so their names can carry the config line for that message.
        for name, h in hierarchies.items():
            h.name = f"{self.hierarchies[name].origin}: {h.name}"
        try:
            return Dataset(table, quasi_identifiers=list(self.quasi_identifiers), sensitive=list(self.sensitive),
                           identifying=list(self.identifying), hierarchies=hierarchies,
                           orders={k: list(v) for k, v in self.orders.items()},
                           missing_values=self.missing_values, name=self.dataset_name, **self.survey_roles)
        except HierarchyError as exc:
            raise ConfigError(str(exc)) from None

    @property
    def survey_roles(self) -> dict:
        """The sampling design's roles the file gives (``weight``, ``strata``, ``household``), as
        :class:`~veil.data.dataset.Dataset` takes them; empty without one."""
        roles = {"weight": self.weight, "strata": list(self.strata) or None, "household": self.household}
        return {role: value for role, value in roles.items() if value}

    def check_against(self, dataset) -> None:
        """The rules that need the table read: a population size at least the table's rows.

        Raises:
            ConfigError: one sentence naming the model's line.
        """
        for spec in self.model_specs:
            size = spec.options.get("population_size")
            if size is not None and size < dataset.num_rows:
                raise ConfigError(f"{spec.origin}: {spec.name}: the population size ({size:,}) must be at least the "
                                  f"sample's {dataset.num_rows:,} records.")

    def _builder(self, name: str):
        """A function of the column's values that builds its hierarchy, named after its config line."""
        spec = self.hierarchies[name]

        def build(values):
            hierarchy = spec.build(None if spec.kind == "file" else self._with_populations(name, values),
                                   self.missing_values)
            hierarchy.name = f"{spec.origin}: {hierarchy.name}"
            return hierarchy

        return build

    def _with_populations(self, name: str, values):
        """A column's values and those of the same column in every population a presence model
        names, so that a hierarchy a builder makes covers the population it is matched with.

        Raises:
            DataError: a population table cannot be read.
        """
        if not self.populations():
            return values
        import pyarrow as pa

        from veil.data.io import read_table

        if isinstance(values, pa.Array):
            values = pa.chunked_array([values])
        elif not isinstance(values, pa.ChunkedArray):
            values = pa.chunked_array([pa.array(list(values))])
        pieces = [values]
        for path in self.populations():
            population = read_table(path).data
            if name in population.column_names:
                pieces.append(population.column(name))
        texts = [piece.cast(pa.string()) if not pa.types.is_string(piece.type) else piece for piece in pieces]
        return pa.chunked_array([chunk for piece in texts for chunk in piece.chunks], type=pa.string())

    def models(self) -> list:
        """The privacy models, in the order listed."""
        return [spec.build() for spec in self.model_specs]

    def populations(self) -> list[Path]:
        """The population tables the presence models (``delta_presence``, ``k_map``) name."""
        return [Path(spec.options["population"]) for spec in self.model_specs if "population" in spec.options]

    def metric(self):
        """The utility metric: ``veil.metrics.make_metric(name, **options)``.

        Raises:
            ConfigError: the metric refuses its options.
        """
        from veil.metrics import make_metric

        spec = self.metric_spec
        try:
            return make_metric(spec.name, **spec.options)
        except (ParameterError, TypeError) as exc:
            raise ConfigError(f"{spec.origin}: metric '{spec.name}': {lower_first(str(exc))}") from None

    def anonymizer(self):
        """The anonymizer the configuration asks for (``veil.anonymize.FullDomain`` ...).

        Raises:
            ConfigError: the algorithm refuses its options, or is a method of statistical
                disclosure control (:func:`veil.sdc.pipeline.run_sdc` runs those).
        """
        import veil.anonymize
        from veil.config.sdc_section import SDC_ALGORITHMS

        spec = self.algorithm
        if spec.name in SDC_ALGORITHMS:
            raise ConfigError(f"{spec.origin}: algorithm {spec.name} is a method of statistical disclosure control, "
                              "which veil anonymize runs; this needs an anonymizer (fulldomain, mondrian, mdav or "
                              "ace).")
        cls = getattr(veil.anonymize, spec.cls)
        try:
            if spec.name == "alphabeta":
                return self._alphabeta(cls)
            return cls(self.models(), suppression_limit=self.suppression_limit, metric=self.metric(),
                       **spec.options)
        except ParameterError as exc:
            raise ConfigError(f"{spec.origin}: algorithm '{spec.name}': {lower_first(str(exc))}") from None

    def _alphabeta(self, cls):
        """The αβ algorithm over the quasi-identifiers and sensitive columns. A column without a
        domain of its own takes its hierarchy file's leaves; a hierarchy a builder made from the
        data's values gives the data's values (``data``, which the parser allows only with
        ``data_domains``)."""
        options = dict(self.algorithm.options)
        seed = options.pop("seed", None)
        domains = dict(options.pop("domains", None) or {})
        for column, hierarchy in self.hierarchies.items():
            if hierarchy.kind != "file" and column not in domains:
                domains[column] = "data"
        return cls(domains=domains, attributes=list(self.quasi_identifiers + self.sensitive), rng=seed, **options)

    def to_dict(self) -> dict:
        """The configuration as plain JSON-ready data, e.g. for a release manifest."""
        return {
            "config": None if self.source is None else str(self.source),
            "name": self.name,
            "data": str(self.data),
            "delimiter": self.delimiter,
            "missing_values": list(self.missing_values),
            "columns": {"quasi_identifiers": list(self.quasi_identifiers), "sensitive": list(self.sensitive),
                        "identifying": list(self.identifying),
                        **{role: value for role, value in (("weight", self.weight), ("strata", list(self.strata)),
                                                           ("household", self.household)) if value}},
            "hierarchies": {name: spec.to_dict() for name, spec in self.hierarchies.items()},
            "orders": {name: list(values) for name, values in self.orders.items()},
            "models": [spec.to_dict() for spec in self.model_specs],
            "suppression_limit": self.suppression_limit,
            "metric": self.metric_spec.to_dict(),
            "algorithm": self.algorithm.to_dict(),
            "output": self.output.to_dict(),
            "engine": self.engine.to_dict(),
            **({"policy": self.policy.to_dict()} if self.policy is not None else {}),
            **({"marginals": self.marginals.to_dict()} if self.marginals is not None else {}),
            **({"synth": self.synth.to_dict()} if self.synth is not None else {}),
        }


def _plain(options: Mapping[str, Any]) -> dict:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in options.items()}
