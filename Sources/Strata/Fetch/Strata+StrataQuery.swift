// Fetch requests speak StrataQuery's language (ObjectPredicate, SortKey, QueryValue): `import Strata` brings it.
@_exported import StrataQuery
