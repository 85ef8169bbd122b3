# cla_data.sh: generated data of the CLA benchmark scripts (sourced by
# cla_e2e_cpu.sh and cla_row_cpu.sh). cla_airline_dml ROWS prints DML
# that builds an Airline-like X (12 categorical and low-cardinality
# columns, scaled to [0, 1]) and labels y in {-1, 1}.
cla_airline_dml() {
  cat <<DML
n = $1
X = cbind(floor(rand(rows=n, cols=1, min=1, max=12.99, seed=1)), floor(rand(rows=n, cols=1, min=1, max=31.99, seed=2)),
          floor(rand(rows=n, cols=1, min=1, max=7.99, seed=3)), floor(rand(rows=n, cols=1, min=0, max=19.99, seed=4)),
          floor(rand(rows=n, cols=1, min=0, max=299.99, seed=5)), floor(rand(rows=n, cols=1, min=0, max=23.99, seed=6)),
          5 * floor(rand(rows=n, cols=4, min=0, max=5.99, seed=7)) * (rand(rows=n, cols=4, seed=8) > 0.6),
          rand(rows=n, cols=2, seed=9) > 0.95)
X = X / colMaxs(X)
y = (rowSums(X[, 7:10]) > 0.8) * 2 - 1
DML
}
