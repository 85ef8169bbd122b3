"""The cases of rtwins.py from SystemDS's application tests: the R twins
under src/test/scripts/applications (r names the script relative to
src/test/scripts), each with the arguments and data shapes of its Java test
under src/test/java/org/apache/sysds/test/applications (smaller shapes, to
keep CI cheap) and a braid script of our own that computes the same thing
with braid's library. The fields are those of rtwins_cases.py. SystemDS's
own application DML scripts are standalone programs (they do not call the
builtin), so braid's library is compared with R's numbers here ("rtwins.py
triage" reruns a case with SystemDS's builtin scripts). Twins left out are
listed in docs/parity.md with the reason.
"""

import math
import random

from rtwins_cases import rand, transform

CASES = []


def case(name, r, rargs, inputs, dml, outputs, tol=1e-10, nvargs=None):
    CASES.append(dict(name=name, r=r, rargs=rargs, inputs=inputs, dml=dml,
                      outputs=outputs, tol=tol, nvargs=nvargs or {}))


def pm1(rows, seed):
    """Labels -1/+1: the sign of a uniform in [-1, 1] (L2SVMTest)."""
    return transform(rand(rows, 1, -1, 1, 1.0, seed),
                     lambda v: 1.0 if v > 0 else -1.0)


def classes(rows, k, seed):
    """Labels 1..k: min(int(u * k) + 1, k) (MultiClassSVMTest,
    NaiveBayesTest)."""
    return transform(rand(rows, 1, 0, 1, 1.0, seed),
                     lambda v: float(min(int(v * k) + 1, k)))


# L2SVMTest: l2svm(reg=1, epsilon=1e-10, maxIterations=3) against L2SVM.R
# (3 nonlinear CG steps with Fletcher-Reeves directions); X in [0, 1]
# 100 x 50 at sparsity 0.01 and 0.7, labels +-1; intercept 0 (the Java test
# never sets intercept: "intercept = this.intercept") and also 1; eps 1e-10.
for sp in (0.01, 0.7):
    for icpt in (0, 1):
        case("app_L2SVM_%g_%d" % (sp, icpt), "applications/l2svm/L2SVM",
             ["{IN}", str(icpt), "1.0E-10", "1.0", "3", "{EXP}"],
             {"X": lambda sp=sp: rand(100, 50, 0, 1, sp, 31),
              "Y": lambda: pm1(100, 32)},
             "w = l2svm(X=read($X), Y=read($Y), intercept=%s, epsilon=1e-10, "
             "reg=1.0, maxIterations=3, verbose=FALSE)\n"
             "write(w, $w, format=\"csv\")\n" % ("TRUE" if icpt else "FALSE"),
             {"w": {}})

# MultiClassSVMTest: msvm(reg=1, epsilon=1e-3, maxIterations=100) against
# m-svm.R (one-against-all L2-SVMs); X in [0, 1] 100 x 50 at sparsity 0.01
# and 0.7, 10 classes, intercept 0 and 1; eps 1e-10.
for sp in (0.01, 0.7):
    for icpt in (0, 1):
        case("app_msvm_%g_%d" % (sp, icpt), "applications/m-svm/m-svm",
             ["{IN}", "10", "0.001", "1.0", "100", str(icpt), "{EXP}"],
             {"X": lambda sp=sp: rand(100, 50, 0, 1, sp, 41),
              "Y": lambda: classes(100, 10, 42)},
             "w = msvm(X=read($X), Y=read($Y), intercept=%s, epsilon=0.001, "
             "reg=1.0, maxIterations=100, verbose=FALSE)\n"
             "write(w, $w, format=\"csv\")\n" % ("TRUE" if icpt else "FALSE"),
             {"w": {}})

# LinearRegressionTest: 3 conjugate gradient steps on t(V) V w = t(V) y
# with ridge eps = 1e-8 (lmCG(icpt=0, reg=1e-8, maxi=3)) against
# LinearRegression.R; V in [0, 1] 100 x 50 at sparsity 0.01 and 0.7, y in
# [1, 10]; eps 1e-10.
for sp in (0.01, 0.7):
    case("app_LinearRegression_%g" % sp,
         "applications/linear_regression/LinearRegression",
         ["{IN}", "1.0E-8", "{EXP}"],
         {"v": lambda sp=sp: rand(100, 50, 0, 1, sp, 51),
          "y": lambda: rand(100, 1, 1, 10, 1.0, 52)},
         "w = lmCG(X=read($v), y=read($y), icpt=0, reg=1e-8, tol=0, maxi=3, "
         "verbose=FALSE)\n"
         "write(w, $w, format=\"csv\")\n",
         {"w": {}})

# NaiveBayesTest (and NaiveBayesParforTest, whose naive-bayes.R is the
# same computation): naiveBayes(laplace=1) against naive-bayes.R, X in
# [0, 1] 100 x 50 at sparsity 0.01 and 0.7, 10 classes; eps 1e-12.
for d in ("naive-bayes", "naive-bayes-parfor"):
    for sp in (0.01, 0.7):
        case("app_%s_%g" % (d, sp), "applications/%s/naive-bayes" % d,
             ["{IN}", "10", "1.0", "{EXP}"],
             {"X": lambda sp=sp: rand(100, 50, 0, 1, sp, 61),
              "Y": lambda: classes(100, 10, 62)},
             "[prior, cond] = naiveBayes(D=read($X), C=read($Y), laplace=1, "
             "verbose=FALSE)\n"
             "write(prior, $prior, format=\"csv\")\n"
             "write(cond, $conditionals, format=\"csv\")\n",
             {"prior": {}, "conditionals": {}}, tol=1e-12)

# CsplineDSTest / CsplineCGTest: cspline at 4.5 on X = 1..n, Y in [0, 5],
# n = 10 and 100; eps 1e-12 (DS) and 1e-5 (CG, maxi = n as in the test).
for mode, r, tol in (("DS", "CsplineDS", 1e-12), ("CG", "CsplineCG", 1e-5)):
    for n in (10, 100):
        case("app_%s_%d" % (r, n), "applications/cspline/" + r,
             ["{IN}X.mtx", "{IN}Y.mtx", "4.5", "{EXP}pred_y"],
             {"X": lambda n=n: [[float(i + 1)] for i in range(n)],
              "Y": lambda n=n: rand(n, 1, 0, 5, 1.0, 71)},
             "[p, K] = cspline(X=read($X), Y=read($Y), inp_x=4.5, mode=\"%s\""
             "%s)\n"
             "write(p, $pred_y, format=\"csv\")\n"
             % (mode, ", tol=1e-12, maxi=%d" % n if mode == "CG" else ""),
             {"pred_y": {}}, tol=tol)


def glm_data(rows, cols, fam, seed):
    """X (unbalanced columns: column j scaled by 2^(j - cols/2)/4) and y
    drawn from the family: "gauss" y = X b + 1 + N(0, 1); "poisson" y ~
    Poisson(exp(X b + 0.5)); "bernoulli" y = +-1 with P[1] = 1 / (1 +
    exp(-(X b))); "gamma" y ~ Gamma(shape 3, mean exp(X b + 1))."""
    g = random.Random(seed)
    X = [[g.gauss(0, 1) * 2 ** ((j - cols / 2) / 4) for j in range(cols)]
         for _ in range(rows)]
    b = [g.gauss(0, 1) / (math.sqrt(cols) * 2 ** ((j - cols / 2) / 4))
         for j in range(cols)]
    y = []
    for r in X:
        eta = sum(x * bj for x, bj in zip(r, b))
        if fam == "gauss":
            y.append([eta + 1 + g.gauss(0, 1)])
        elif fam == "poisson":
            lam, k, p = math.exp(eta + 0.5), 0, 1.0
            L = math.exp(-lam)
            while True:  # Knuth's multiplication method
                p *= g.random()
                if p <= L:
                    break
                k += 1
            y.append([float(k)])
        elif fam == "bernoulli":
            y.append([1.0 if g.random() < 1 / (1 + math.exp(-eta)) else -1.0])
        else:
            y.append([g.gammavariate(3, math.exp(eta + 1) / 3)])
    return X, y


# GLMTest: glm(icpt=2, tol=1e-12, moi=300, mii=0, disp=0, reg=0) against
# R's glm(control epsilon 1e-12, maxit 100) with an intercept, the first
# column of betas; the Java test's data come from TestUtils's GLM
# generator (not here: glm_data above, 400 x 8); eps 1e-6 * max |beta|
# (x2 for Gaussian), here 1e-6 absolute on betas of size ~1.
for nm, fam, args in (("gaussian_id", "gauss", (1, 0.0, 1, 1.0)),
                      ("poisson_log", "poisson", (1, 1.0, 1, 0.0)),
                      ("gamma_log", "gamma", (1, 2.0, 1, 0.0)),
                      ("bernoulli_logit", "bernoulli", (2, -1.0, 2, 0.0)),
                      ("bernoulli_probit", "bernoulli", (2, -1.0, 3, 0.0))):
    dfam, par, link, lpow = args
    bern = dfam == 2 and par != 1.0
    case("app_GLM_" + nm, "applications/glm/GLM",
         ["{IN}X.mtx", "{IN}Y.mtx", "%d" % dfam, "%f" % par, "%d" % link,
          "%f" % lpow, "1", "0.000000000001", "{EXP}betas_R"],
         {"X": lambda fam=fam: glm_data(400, 8, fam, 81)[0],
          "Y": lambda fam=fam: glm_data(400, 8, fam, 81)[1]},
         "B = glm(X=read($X), Y=read($Y), dfam=%d, vpow=%g, link=%d, "
         "lpow=%g, yneg=%g, icpt=2, disp=0.0, reg=0.0, tol=1e-12, moi=300, "
         "mii=0, verbose=FALSE)\n"
         "write(B[, 1], $betas_R, format=\"csv\")\n"
         % (dfam, 0.0 if bern else par, link, lpow, par if bern else 0.0),
         {"betas_R": {}}, tol=1e-6)

# ParForCorrelationTest and ParForCorrelationTestLarge: the Pearson
# correlation of every pair of columns i < j (the upper triangle of cor,
# no diagonal) against parfor_corr.R / parfor_corr_large.R, V in [0, 1]
# (the Java tests' minVal and maxVal), 3578 x 20 (here 200 x 20) dense;
# eps 1e-10.
# parfor_corr_large.R fills only the pairs i in 1..8, j in i+1..i+9.
case("app_parfor_corr", "applications/parfor/parfor_corr", ["{IN}", "{EXP}"],
     {"V": lambda: rand(200, 20, 0, 1, 1.0, 91)},
     "R = upper.tri(target=cor(read($V)), diag=FALSE, values=TRUE)\n"
     "write(R, $Rout, format=\"csv\")\n",
     {"Rout": {}})
case("app_parfor_corr_large", "applications/parfor/parfor_corr_large",
     ["{IN}", "{EXP}"],
     {"V": lambda: rand(200, 20, 0, 1, 1.0, 92)},
     "C = cor(read($V))\n"
     "M = matrix(0, ncol(C), ncol(C))\n"
     "for (i in 1:8) M[i, (i + 1):(i + 9)] = matrix(1, 1, 9)\n"
     "write(C * M, $Rout, format=\"csv\")\n",
     {"Rout": {}})

# ParForNaiveBayesTest: naiveBayes(laplace=1) against parfor_naive-bayes.R,
# D 50000 x 105 (here 200 x 20) at sparsity 0.7 and 0.05 (seed 7), C =
# round(U[1, 5]) (seed 3), 5 classes; eps 1e-10. The Java test draws D in
# [-1, 1], which its standalone parfor_naive-bayes*.dml accepts; SystemDS's
# naiveBayes builtin (and braid's) stops on negative feature counts, so D
# is drawn in [0, 1] here.
for sp in (0.7, 0.05):
    case("app_parfor_naive-bayes_%g" % sp,
         "applications/parfor/parfor_naive-bayes", ["{IN}", "5", "{EXP}"],
         {"D": lambda sp=sp: rand(200, 20, 0, 1, sp, 7),
          "C": lambda: transform(rand(200, 1, 1, 5, 1.0, 3), round)},
         "[prior, cond] = naiveBayes(D=read($D), C=read($C), laplace=1, "
         "verbose=FALSE)\n"
         "write(prior, $class_prior, format=\"csv\")\n"
         "write(cond, $class_conditionals, format=\"csv\")\n",
         {"class_prior": {}, "class_conditionals": {}})

# BivariateScaleScaleTest (testPearsonR): Pearson's R of two scale columns
# (cor of cbind(X, Y)) against ScaleScale.R's cor.test (written by R's
# write()), X and Y in [0, 10000] at sparsity 0.1, 100000 rows (here
# 2000); eps 1e-10.
case("app_ScaleScale", "applications/descriptivestats/ScaleScale",
     ["{IN}", "{EXP}"],
     {"X": lambda: rand(2000, 1, 0, 10000, 0.1, 101),
      "Y": lambda: rand(2000, 1, 0, 10000, 0.1, 102)},
     "C = cor(cbind(read($X), read($Y)))\n"
     "write(C[1, 2], $PearsonR, format=\"csv\")\n",
     {"PearsonR": {}})


# ---------------------------------------------------------------------
# The descriptive-statistics twins (UnivariateStatsBase's Scale and
# WeightedScaleTest, UnivariateCategoricalTest, the Bivariate*Test
# classes). SystemDS's DML twins compute these with DML operators
# (moment, quantile, median, interQuartileMean, table, aggregate, cdf), so
# braid's scripts here do the same with braid's operators. A case's sys
# names SystemDS's application script and its -args, which appdml.py runs
# with braid's interpreter against the same R numbers ({IN}x: input x as a
# text-format file with its .mtd; {OUT}y: output y).
# The twins needing CRAN's moments (Scale, WeightedScaleTest,
# parfor_univariate) were generated with the stand-in package in
# rtwins/moments (Debian has no r-cran-moments; the R scripts call only
# moment(x, order, central), which it computes as CRAN's does).

def rounded(m):
    """TestUtils.round: Math.round of every cell (half up)."""
    return transform(m, lambda v: float(math.floor(v + 0.5)))


def floored(m):
    """TestUtils.floor and OrderStatisticsTest.round: floor of every cell."""
    return transform(m, lambda v: float(math.floor(v)))


def scalar_outs(names, tol):
    return {n: {"tol": tol} for n in names}


def sys_case(name, r, rargs, inputs, dml, outputs, sys, tol):
    case(name, r, rargs, inputs, dml, outputs, tol=tol)
    CASES[-1]["sys"] = sys


SCALE_OUTS = ["mean", "std", "se", "var", "cv", "min", "max", "rng", "g1",
              "se_g1", "g2", "se_g2", "median", "iqm", "out_minus",
              "out_plus", "quantile"]

# Scale (UnivariateUnweightedScale{Dense,Sparse}Test): V 2000..2003 rows
# in NEG [-255, -2], MIXED [-200, 200] or POS [2, 255] at sparsity 0.8 or
# 0.3, P 5 probabilities; eps 1e-9. Here three of the 24 combinations
# (each row count mod 4 matters to the quantiles and the IQM).
SCALE_DML = (
    "V = read($vector)\nP = read($prob)\nn = nrow(V)\n"
    "mu = mean(V)\nvr = moment(V, 2) * n / (n - 1)\nsd = sqrt(vr)\n"
    "g1 = moment(V, 3) / sd^3\ng2 = moment(V, 4) / sd^4 - 3\n"
    "seg1 = sqrt(6 * n * (n - 1) / ((n - 2) * (n + 1) * (n + 3)))\n"
    "seg2 = sqrt(4 * (n^2 - 1) * seg1^2 / ((n + 5) * (n - 3)))\n"
    "lo = min(V)\nhi = max(V)\n"
    "S = list(mu, sd, sd / sqrt(n), vr, sd / mu, lo, hi, hi - lo, g1, "
    "seg1, g2, seg2, median(V), interQuartileMean(V))\n"
    "%s"
    "write((V < mu - 5 * sd) * V, $out_minus, format=\"csv\")\n"
    "write((V > mu + 5 * sd) * V, $out_plus, format=\"csv\")\n"
    "write(quantile(V, P), $quantile, format=\"csv\")\n" % "".join(
        "write(as.matrix(as.scalar(S[%d])), $%s, format=\"csv\")\n"
        % (i + 1, o) for i, o in enumerate(SCALE_OUTS[:14])))

for rows, rng, sp in ((2000, (-200, 200), 0.8), (2001, (2, 255), 0.3),
                      (2003, (-255, -2), 0.8)):
    sys_case("app_Scale_%d_%g" % (rows, sp),
             "applications/descriptivestats/Scale", ["{IN}", "{EXP}"],
             {"vector": lambda rows=rows, rng=rng, sp=sp:
              rand(rows, 1, rng[0], rng[1], sp, rows),
              "prob": lambda: rand(5, 1, 0, 1, 1.0, 111)},
             SCALE_DML, scalar_outs(SCALE_OUTS, 1e-9),
             ("descriptivestats/Scale.dml",
              ["{IN}vector", str(rows), "{IN}prob", "5"] +
              ["{OUT}" + o for o in SCALE_OUTS[:14]] +
              ["{OUT}out_minus", "{OUT}out_plus", "{OUT}quantile"]), 1e-9)

# WeightedScaleTest: as Scale with integer weights in [1, 10) (floored); R
# repeats each value by its weight.
WSCALE_DML = (
    "V = read($vector)\nW = read($weight)\nP = read($prob)\nn = sum(W)\n"
    "mu = sum(V * W) / n\nvr = moment(V, W, 2) * n / (n - 1)\n"
    "sd = sqrt(vr)\nm2 = moment(V, W, 2)\nm4 = moment(V, W, 4)\n"
    "g1 = n^2 * moment(V, W, 3) / ((n - 1) * (n - 2) * sd^3)\n"
    "g2 = (n^2 * (n + 1) * m4 - 3 * m2^2 * n^2 * (n - 1)) / "
    "((n - 1) * (n - 2) * (n - 3) * vr^2)\n"
    "seg1 = sqrt(6 * n * (n - 1) / ((n - 2) * (n + 1) * (n + 3)))\n"
    "seg2 = sqrt(4 * (n^2 - 1) * seg1^2 / ((n + 5) * (n - 3)))\n"
    "lo = min(V)\nhi = max(V)\n"
    "S = list(mu, sd, sd / sqrt(n), vr, sd / mu, lo, hi, hi - lo, g1, "
    "seg1, g2, seg2, median(V, W), interQuartileMean(V, W))\n"
    "%s"
    "write((V < mu - 5 * sd) * V, $out_minus, format=\"csv\")\n"
    "write((V > mu + 5 * sd) * V, $out_plus, format=\"csv\")\n"
    "write(quantile(V, W, P), $quantile, format=\"csv\")\n" % "".join(
        "write(as.matrix(as.scalar(S[%d])), $%s, format=\"csv\")\n"
        % (i + 1, o) for i, o in enumerate(SCALE_OUTS[:14])))

for rows, rng, sp in ((2002, (-200, 200), 0.3), (2001, (2, 255), 0.8)):
    sys_case("app_WeightedScale_%d_%g" % (rows, sp),
             "applications/descriptivestats/WeightedScaleTest",
             ["{IN}", "{EXP}"],
             {"vector": lambda rows=rows, rng=rng, sp=sp:
              rand(rows, 1, rng[0], rng[1], sp, rows + 10),
              "weight": lambda rows=rows: floored(
                  rand(rows, 1, 1, 10, 1.0, rows + 11)),
              "prob": lambda: rand(5, 1, 0, 1, 1.0, 112)},
             WSCALE_DML, scalar_outs(SCALE_OUTS, 1e-9),
             ("descriptivestats/WeightedScaleTest.dml",
              ["{IN}vector", str(rows), "{IN}weight", "{IN}prob", "5"] +
              ["{OUT}" + o for o in SCALE_OUTS[:14]] +
              ["{OUT}out_minus", "{OUT}out_plus", "{OUT}quantile"]), 1e-9)

# Categorical and WeightedCategoricalTest (UnivariateCategoricalTest):
# V floor(U[1, 10]) 2000 rows, weights floor(U[1, 10]); eps 1e-9.
CAT_OUTS = ["Nc", "R", "Pc", "C", "Mode"]
for w in (False, True):
    sys_case("app_%sCategorical" % ("Weighted" if w else ""),
             "applications/descriptivestats/" +
             ("WeightedCategoricalTest" if w else "Categorical"),
             ["{IN}", "{EXP}"],
             dict({"vector": lambda: floored(rand(2000, 1, 1, 10, 1.0, 121))},
                  **({"weight": lambda: floored(
                      rand(2000, 1, 1, 10, 1.0, 122))} if w else {})),
             "V = read($vector)\n" +
             ("Nc = table(V, 1, read($weight))\n" if w else
              "Nc = table(V, 1)\n") +
             "write(Nc, $Nc, format=\"csv\")\n"
             "write(as.matrix(nrow(Nc)), $R, format=\"csv\")\n"
             "write(Nc / sum(Nc), $Pc, format=\"csv\")\n"
             "write(Nc > 0, $C, format=\"csv\")\n"
             "write(Nc == max(Nc), $Mode, format=\"csv\")\n",
             scalar_outs(CAT_OUTS, 1e-9),
             ("descriptivestats/" +
              ("WeightedCategoricalTest.dml" if w else "Categorical.dml"),
              ["{IN}vector", "2000"] + (["{IN}weight"] if w else []) +
              ["{OUT}" + o for o in CAT_OUTS]), 1e-9)

# The chi-squared test of a contingency table: R's chisq.test (Yates'
# correction only on 2 x 2 tables, never here) and Cramer's V.
CHISQ_DML = (
    "W = sum(F)\nE = rowSums(F) %*% colSums(F) / W\n"
    "chi = sum((F - E)^2 / E)\n"
    "p = 1 - cdf(target=chi, dist=\"chisq\", df=(nrow(F) - 1) * "
    "(ncol(F) - 1))\n"
    "write(as.matrix(p), $PValue, format=\"csv\")\n"
    "write(as.matrix(sqrt(chi / (W * (min(nrow(F), ncol(F)) - 1)))), "
    "$CramersV, format=\"csv\")\n")

def bivar_twin(test, pair, make, wmake, body, outs):
    """A Bivariate*Test twin, unweighted and weighted (<test>WithWeightsTest,
    case name suffix _w): inputs pair (names A and B or Y, made by make)
    and WM (wmake), 10000 rows; body computes the outputs from them (and
    from $WM only when weighted)."""
    for w in (False, True):
        inputs = dict(zip(pair, make))
        if w:
            inputs["WM"] = wmake
        sys_case("app_%s%s" % (test, "_w" if w else ""),
                 "applications/descriptivestats/%s%s" % (
                     test, "WithWeightsTest" if w else ""), ["{IN}", "{EXP}"],
                 inputs, body(w), scalar_outs(outs, 1e-9),
                 ("descriptivestats/%s%s.dml" % (
                     test, "WithWeightsTest" if w else ""),
                  ["{IN}" + pair[0], "10000", "{IN}" + pair[1]] +
                  (["{IN}WM"] if w else []) + ["{OUT}" + o for o in outs]),
                 1e-9)


def table_of(w):
    return "F = table(read($A), read($B)%s)\n" % (", read($WM)" if w else "")


# BivariateCategoricalCategoricallTest: A round(U[1, 100]), B
# round(U[1, 150]), 10000 rows, weights round(U[1, 100]); eps 1e-9.
bivar_twin("CategoricalCategorical", ("A", "B"),
           (lambda: rounded(rand(10000, 1, 1, 100, 1.0, 3)),
            lambda: rounded(rand(10000, 1, 1, 150, 1.0, 7))),
           lambda: rounded(rand(10000, 1, 1, 100, 1.0, 131)),
           lambda w: table_of(w) + CHISQ_DML, ["PValue", "CramersV"])

# testOddsRatio: A and B round(U[1, 2]) 10000 rows; eps 1e-9.
sys_case("app_OddsRatio", "applications/descriptivestats/OddsRatio",
         ["{IN}", "{EXP}"],
         {"A": lambda: rounded(rand(10000, 1, 1, 2, 1.0, 141)),
          "B": lambda: rounded(rand(10000, 1, 1, 2, 1.0, 142))},
         "F = table(read($A), read($B))\n"
         "a = as.scalar(F[1, 1])\nb = as.scalar(F[1, 2])\n"
         "c = as.scalar(F[2, 1])\nd = as.scalar(F[2, 2])\n"
         "odds = a * d / (b * c)\nsg = sqrt(1 / a + 1 / b + 1 / c + 1 / d)\n"
         "write(as.matrix(odds), $oddsRatio, format=\"csv\")\n"
         "write(as.matrix(sg), $sigma, format=\"csv\")\n"
         "write(as.matrix(exp(log(odds) - 2 * sg)), $leftConf, "
         "format=\"csv\")\n"
         "write(as.matrix(exp(log(odds) + 2 * sg)), $rightConf, "
         "format=\"csv\")\n"
         "write(as.matrix(abs(log(odds) / sg)), $sigmasAway, "
         "format=\"csv\")\n",
         scalar_outs(["oddsRatio", "sigma", "leftConf", "rightConf",
                      "sigmasAway"], 1e-9),
         ("descriptivestats/OddsRatio.dml",
          ["{IN}A", "10000", "{IN}B", "{OUT}oddsRatio", "{OUT}sigma",
           "{OUT}leftConf", "{OUT}rightConf", "{OUT}sigmasAway"]), 1e-9)

# BivariateOrdinalOrdinalTest: Spearman's rho (average ranks of ties)
# of A floor(U[1, 100]) and B floor(U[1, 75]), 10000 rows, weights
# floor(U[1, 100]) (R repeats each row by its weight); eps 1e-9.
bivar_twin("OrdinalOrdinal", ("A", "B"),
           (lambda: floored(rand(10000, 1, 1, 100, 1.0, 151)),
            lambda: floored(rand(10000, 1, 1, 75, 1.0, 152))),
           lambda: floored(rand(10000, 1, 1, 100, 1.0, 153)),
           lambda w: table_of(w) +
           "a = rowSums(F)\nb = t(colSums(F))\nW = sum(F)\n"
           "ra = cumsum(a) - (a - 1) / 2\nrb = cumsum(b) - (b - 1) / 2\n"
           "ma = sum(ra * a) / W\nmb = sum(rb * b) / W\n"
           "cv = sum(F * ((ra - ma) %*% t(rb - mb)))\n"
           "sa = sum(a * (ra - ma)^2)\nsb = sum(b * (rb - mb)^2)\n"
           "write(as.matrix(cv / sqrt(sa * sb)), $Spearman, "
           "format=\"csv\")\n", ["Spearman"])

# BivariateScaleCategoricalTest: A floor(U[1, 100]), Y in [0, 250] at
# sparsity 0.1, 10000 rows, weights floor(U[1, 10]); eps 1e-9.
bivar_twin("ScaleCategorical", ("A", "Y"),
           (lambda: floored(rand(10000, 1, 1, 100, 1.0, 161)),
            lambda: rand(10000, 1, 0, 250, 0.1, 162)),
           lambda: floored(rand(10000, 1, 1, 10, 1.0, 163)),
           lambda w: "A = read($A)\nY = read($Y)\n" +
           ("WM = read($WM)\n" if w else "WM = matrix(1, nrow(Y), 1)\n") +
           "W = sum(WM)\nmy = sum(Y * WM) / W\n"
           "vy = moment(Y, WM, 2) * W / (W - 1)\n"
           "N = aggregate(target=WM, groups=A, fn=\"sum\")\n"
           "M = aggregate(target=Y * WM, groups=A, fn=\"sum\") / N\n"
           "P = table(seq(1, nrow(A)), A)\n"
           "V = t(P) %*% (WM * (Y - P %*% M)^2) / (N - 1)\nk = nrow(N)\n"
           "eta = sqrt(1 - sum((N - 1) * V) / ((W - 1) * vy))\n"
           "f = (sum(N * (M - my)^2) / (k - 1)) / "
           "(sum((N - 1) * V) / (W - k))\n"
           "write(as.matrix(vy), $VarY, format=\"csv\")\n"
           "write(as.matrix(my), $MeanY, format=\"csv\")\n"
           "write(N, $CFreqs, format=\"csv\")\n"
           "write(M, $CMeans, format=\"csv\")\n"
           "write(V, $CVars, format=\"csv\")\n"
           "write(as.matrix(eta), $Eta, format=\"csv\")\n"
           "write(as.matrix(f), $AnovaF, format=\"csv\")\n",
           ["VarY", "MeanY", "CFreqs", "CMeans", "CVars", "Eta", "AnovaF"])

# testPearsonRWithWeights: boot's corr(cbind(X, Y), w), X and Y in
# [0, 10000] at sparsity 0.1, weights floor(U[1, 1000]), 100000 rows (here
# 5000); eps 1e-10.
sys_case("app_ScaleScale_w",
         "applications/descriptivestats/ScaleScalePearsonRWithWeightsTest",
         ["{IN}", "{EXP}"],
         {"X": lambda: rand(5000, 1, 0, 10000, 0.1, 171),
          "Y": lambda: rand(5000, 1, 0, 10000, 0.1, 172),
          "WM": lambda: floored(rand(5000, 1, 1, 1000, 1.0, 173))},
         "X = read($X)\nY = read($Y)\nWM = read($WM)\n"
         "write(as.matrix(cov(X, Y, WM) / sqrt(moment(X, WM, 2) * "
         "moment(Y, WM, 2)) * (sum(WM) - 1) / sum(WM)), $PearsonR, "
         "format=\"csv\")\n",
         scalar_outs(["PearsonR"], 1e-10),
         ("descriptivestats/ScaleScalePearsonRWithWeightsTest.dml",
          ["{IN}X", "5000", "{IN}Y", "{IN}WM", "{OUT}PearsonR"]), 1e-10)
# ScaleScale (above) gets its SystemDS script too
CASES[[c["name"] for c in CASES].index("app_ScaleScale")]["sys"] = (
    "descriptivestats/ScaleScale.dml",
    ["{IN}X", "2000", "{IN}Y", "{OUT}PearsonR"])


# HITSTest: hub and authority scores by power iteration from round(G)
# (G uniform [0, 1], 1000 x 1000 dense, here 300 x 300), rescaled by the
# maximum each step, until both squared changes are under tol (1e-6) or
# past maxiter (2) steps; eps 1e-3. No builtin computes HITS, so braid's
# script runs the iteration itself (SystemDS's HITS.dml: appdml.py).
sys_case("app_HITS", "applications/hits/HITS",
         ["{IN}", "2", "1.0E-6", "{EXP}"],
         {"G": lambda: rand(300, 300, 0, 1, 1.0, 181)},
         "G = read($G)\na = round(G)\nh = a\nstep = 0\ndone = FALSE\n"
         "while (!done) {\n"
         "  h0 = h\n  a0 = a\n  h = G %*% a\n  a = t(G) %*% h\n"
         "  h = h / max(h)\n  a = a / max(a)\n"
         "  done = (sum((h - h0)^2) < 1e-6 & sum((a - a0)^2) < 1e-6) "
         "| step > 2\n"
         "  step = step + 1\n}\n"
         "write(h, $hubs, format=\"csv\")\n"
         "write(a, $authorities, format=\"csv\")\n",
         {"hubs": {}, "authorities": {}},
         ("hits/HITS.dml", ["{IN}G", "2", "1.0E-6", "{OUT}hubs",
                            "{OUT}authorities"]), 1e-3)

# WelchTTest: per column, Welch's t statistic and its rounded
# Welch-Satterthwaite degrees of freedom of two samples in [1, 5] at
# sparsity 0.2 ({attributes, positive rows, negative rows} = {5, 100,
# 150} and {50, 2000, 1500}, here {20, 500, 400}); eps 1e-13. braid's
# script computes the variances by centring (the R twin and SystemDS's
# script use sum of squares minus n mean^2).
for na, npos, nneg in ((5, 100, 150), (20, 500, 400)):
    sys_case("app_welchTTest_%d_%d" % (na, npos),
             "applications/welchTTest/welchTTest", ["{IN}", "{EXP}"],
             {"posSamples": lambda na=na, npos=npos:
              rand(npos, na, 1, 5, 0.2, 191 + na),
              "negSamples": lambda na=na, nneg=nneg:
              rand(nneg, na, 1, 5, 0.2, 192 + na)},
             "P = read($posSamples)\nN = read($negSamples)\n"
             "np = nrow(P)\nnn = nrow(N)\n"
             "vp = colSums((P - colMeans(P))^2) / (np - 1) / np\n"
             "vn = colSums((N - colMeans(N))^2) / (nn - 1) / nn\n"
             "write((colMeans(P) - colMeans(N)) / sqrt(vp + vn), "
             "$t_statistics, format=\"csv\")\n"
             "write(round((vp + vn)^2 / (vp^2 / (np - 1) + vn^2 / (nn - 1))),"
             " $degrees_of_freedom, format=\"csv\")\n",
             {"t_statistics": {}, "degrees_of_freedom": {}},
             ("welchTTest/welchTTest.dml",
              ["{IN}posSamples", "{IN}negSamples", "{OUT}t_statistics",
               "{OUT}degrees_of_freedom"]), 1e-13)

# GNMFTest: Lee and Seung's multiplicative updates (H first, then W, eps
# 1e-8 in the denominators) from the given W and H, V in [1, 5] at
# sparsity 0.2, W and H uniform [0, 1], {m, n, k} = {100, 50, 5} (also
# {2000, 1500, 50}; here {150, 120, 10}), maxiter 2 (here also 10); eps
# 1e-6. braid's gnmf draws its own start, so braid's script runs the
# updates (SystemDS's GNMF.dml: appdml.py).
for m, n, k, it in ((100, 50, 5, 2), (150, 120, 10, 10)):
    sys_case("app_GNMF_%d_%d" % (m, it), "applications/gnmf/GNMF",
             ["{IN}", str(it), "{EXP}"],
             {"v": lambda m=m, n=n: rand(m, n, 1, 5, 0.2, 201 + m),
              "w": lambda m=m, k=k: rand(m, k, 0, 1, 1.0, 202 + m),
              "h": lambda n=n, k=k: rand(k, n, 0, 1, 1.0, 203 + n)},
             "V = read($v)\nW = read($w)\nH = read($h)\n"
             "for (i in 1:%d) {\n"
             "  H = H * (t(W) %%*%% V) / (t(W) %%*%% W %%*%% H + 1e-8)\n"
             "  W = W * (V %%*%% t(H)) / (W %%*%% (H %%*%% t(H)) + 1e-8)\n"
             "}\n"
             "write(W, $out_w, format=\"csv\")\nwrite(H, $out_h, format=\"csv\")\n"
             % it,
             {"w": {}, "h": {}},
             ("gnmf/GNMF.dml", ["{IN}v", "{IN}w", "{IN}h", str(it),
                                "{OUT}w", "{OUT}h"]), 1e-6)


def add_sys(prefix, make):
    """Gives each case named prefix* the sys that make(case) returns."""
    for c in CASES:
        if c["name"].startswith(prefix) and "sys" not in c:
            c["sys"] = make(c)


def icpt(c):
    return c["name"][-1]


# SystemDS's scripts of the twins above (their Java tests' arguments)
add_sys("app_L2SVM_", lambda c: ("l2svm/L2SVM.dml", [], {
    "X": "{IN}X", "Y": "{IN}Y", "icpt": icpt(c), "tol": "1.0E-10",
    "reg": "1.0", "maxiter": "3", "model": "{OUT}w", "Log": "{OUT}Log"}))
add_sys("app_msvm_", lambda c: ("m-svm/m-svm.dml", [], {
    "X": "{IN}X", "Y": "{IN}Y", "classes": "10", "tol": "0.001",
    "reg": "1.0", "maxiter": "100", "icpt": icpt(c), "model": "{OUT}w",
    "Log": "{OUT}Log"}))
add_sys("app_LinearRegression_", lambda c: (
    "linear_regression/LinearRegression.dml",
    ["{IN}v", "{IN}y", "1.0E-8", "{OUT}w"]))
for d in ("naive-bayes", "naive-bayes-parfor"):
    add_sys("app_%s_" % d, lambda c, d=d: ("%s/naive-bayes.dml" % d, [], {
        "X": "{IN}X", "Y": "{IN}Y", "classes": "10", "laplace": "1",
        "prior": "{OUT}prior", "conditionals": "{OUT}conditionals",
        "accuracy": "{OUT}accuracy"}))
for r in ("CsplineDS", "CsplineCG"):
    add_sys("app_%s_" % r, lambda c, r=r: ("cspline/%s.dml" % r, [], dict({
        "X": "{IN}X", "Y": "{IN}Y", "K": "{OUT}K", "O": "{OUT}pred_y",
        "inp_x": "4.5"}, **({"maxi": c["name"].split("_")[-1]}
                           if r == "CsplineCG" else {}))))


def glm_sys(c):
    a = c["rargs"]  # X, Y, dfam, par, link, lpow, ...
    bern = a[2] == "2" and float(a[3]) != 1.0
    return ("glm/GLM.dml", [], {
        "dfam": a[2], "yneg" if bern else "vpow": a[3],
        "vpow" if bern else "yneg": "0.0", "link": a[4], "lpow": a[5],
        "icpt": "2", "disp": "0.0", "reg": "0.0",
        "tol": "0.000000000001", "moi": "300", "mii": "0",
        "X": "{IN}X", "Y": "{IN}Y", "B": "{OUT}betas_R"}, {"betas_R": 1})


add_sys("app_GLM_", glm_sys)
add_sys("app_parfor_corr_large", lambda c: (
    "parfor/parfor_corr_large1.dml", ["{IN}V", "200", "20", "{OUT}Rout"]))
add_sys("app_parfor_corr", lambda c: (
    "parfor/parfor_corr1.dml", ["{IN}V", "200", "20", "{OUT}Rout"]))
add_sys("app_parfor_naive-bayes_", lambda c: (
    "parfor/parfor_naive-bayes1.dml",
    ["{IN}D", "{IN}C", "5", "{OUT}class_prior", "{OUT}class_conditionals"]))


# ArimaTest (arima_old.R with arima_old.dml's positional arguments; the
# nvargs variant arima.dml/arima.R is the same computation):
# max_func_invoc 10, (p, d, q) = (P, D, Q) = (1, 1, 1), s 24, include_mean
# 1, Jacobi's method; a series in [1, 5] at sparsity 0.9, 3000 long (here
# 1000); eps 1e-14. Also 40 evaluations with the CG solver (useJacobi 0)
# and no mean, and a plain ARIMA(2, 0, 1) without seasons (30).
ARIMA_ARGS = (("10", "1", "1", "1", "1", "1", "1", "24", "1", "1"),
              ("40", "1", "1", "1", "1", "1", "1", "24", "0", "0"),
              ("30", "2", "0", "1", "0", "0", "0", "1", "0", "1"))
for r in ("arima", "arima_old"):
    for k, a in enumerate(ARIMA_ARGS):
        sys_case("app_%s_%d" % (r, k), "applications/arima_box-jenkins/" + r,
                 ["{IN}"] + list(a) + ["{EXP}"],
                 {"col": lambda k=k: rand(1000, 1, 1, 5, 0.9, 211 + k)},
                 "m = arima(X=read($col), max_func_invoc=%s, p=%s, d=%s, "
                 "q=%s, P=%s, D=%s, Q=%s, s=%s, include_mean=%s, "
                 "solver=\"%s\")\n"
                 "write(m, $learnt.model, format=\"csv\")\n"
                 % (a[:8] + ("TRUE" if a[8] == "1" else "FALSE",
                             "jacobi" if a[9] == "1" else "cg")),
                 {"learnt.model": {}},
                 ("arima_box-jenkins/arima_old.dml",
                  ["{IN}col"] + list(a) + ["{OUT}learnt.model"])
                 if r == "arima_old" else
                 ("arima_box-jenkins/arima.dml", [], dict(
                     zip(("max_func_invoc", "p", "d", "q", "P", "D", "Q", "s",
                          "include_mean"), a[:9]),
                     X="{IN}col", dest="{OUT}learnt.model",
                     solver="jacobi" if a[9] == "1" else "cg",
                     result_format="text")), 1e-14)


def kinds(cols):
    """The parfor stats tests' column kinds: (i mod 3) + 1 (1 scale, 2
    nominal, 3 ordinal)."""
    return [[float(i % 3 + 1) for i in range(cols)]]


def stats_data(rows, cols, seed):
    """D in [1, 5] (the tests' minVal and maxVal), the nominal and ordinal
    columns floored."""
    D = rand(rows, cols, 1, 5, 1.0, seed)
    return [[math.floor(v) if j % 3 else v for j, v in enumerate(r)]
            for r in D]


# ParForUnivariateStatsTest (removed from SystemDS with the MR backend;
# its R twin and parfor_univariate*.dml remain): 17 base statistics of
# each of 30 columns of kinds 1, 2, 3 (the counts of each category too),
# D 1000 x 30 (rows: CPThreshold + 1); maxC 5; eps 1e-10. braid's univar
# gives the base statistics; the counts come from table.
sys_case("app_parfor_univariate", "applications/parfor/parfor_univariate",
         ["{IN}", "5", "{EXP}"],
         {"D": lambda: stats_data(1000, 30, 7777), "K": lambda: kinds(30)},
         "A = read($D)\nK = read($K)\n"
         "write(univar(X=A, types=K), $base.stats, format=\"csv\")\n"
         "C = matrix(0, 5, ncol(A))\n"
         "for (i in 1:ncol(A))\n"
         "  if (as.scalar(K[1, i]) > 1)\n"
         "    C[, i] = table(A[, i], 1, 5, 1)\n"
         "write(C, $categorical.counts, format=\"csv\")\n",
         {"base.stats": {}, "categorical.counts": {}},
         ("parfor/parfor_univariate1.dml", ["{IN}D", "{IN}K", "5", "{OUT}"]),
         1e-10)


def col_sets(n, cols, seed):
    """S1 or S2: floor(U[1, cols + 1 - 1e-10]) (the test's column sets)."""
    return floored(rand(1, n, 1, cols + 1 - 1e-10, 1.0, seed))


def set_kinds(S, cols):
    return [[float((int(v) - 1) % 3 + 1) for v in S[0]]]


# ParForBivariateStatsTest: for each pair (S1[i], S2[j]) of 10 x 10
# columns of D 1000 x 30 (kinds as above): Pearson's r (scale-scale);
# chi-squared, its degrees of freedom, p-value and Cramer's V (two
# categorical columns), Spearman's rho (ordinal-ordinal); eta and the
# ANOVA F with each category's count, mean and variance (scale against
# categorical); maxC 5; eps 1e-10. braid's script computes each pair with
# braid's operators (cor, table, cdf, aggregate).
BIVAR_DML = """D = read($D)
S1 = read($S1)
S2 = read($S2)
K1 = read($K1)
K2 = read($K2)
n2 = ncol(S2)
B = matrix(0, 8, ncol(S1) * n2)
CC = matrix(0, 5, ncol(B))
CM = matrix(0, 5, ncol(B))
CV = matrix(0, 5, ncol(B))
for (i in 1:ncol(S1)) {
  for (j in 1:n2) {
    p = (i - 1) * n2 + j
    k1 = as.scalar(K1[1, i])
    k2 = as.scalar(K2[1, j])
    X1 = D[, as.scalar(S1[1, i])]
    X2 = D[, as.scalar(S2[1, j])]
    if (k1 == 1 & k2 == 1) {
      R = cor(cbind(X1, X2))
      B[1, p] = R[1, 2]
    }
    else if (k1 > 1 & k2 > 1) {
      F = table(X1, X2)
      W = sum(F)
      E = rowSums(F) %*% colSums(F) / W
      chi = sum((F - E)^2 / E)
      df = (nrow(F) - 1) * (ncol(F) - 1)
      B[2, p] = chi
      B[3, p] = df
      B[4, p] = 1 - cdf(target=chi, dist="chisq", df=df)
      B[5, p] = sqrt(chi / (W * (min(nrow(F), ncol(F)) - 1)))
      if (k1 == 3 & k2 == 3) {
        a = rowSums(F)
        b = t(colSums(F))
        ra = cumsum(a) - (a - 1) / 2
        rb = cumsum(b) - (b - 1) / 2
        da = ra - sum(ra * a) / W
        db = rb - sum(rb * b) / W
        B[6, p] = sum(F * (da %*% t(db))) / sqrt(sum(a * da^2) * sum(b * db^2))
      }
    }
    else {
      A = X2
      Y = X1
      if (k2 == 1) {
        A = X1
        Y = X2
      }
      W = nrow(Y)
      vy = var(Y)
      N = aggregate(target=Y, groups=A, fn="count")
      M = aggregate(target=Y, groups=A, fn="mean")
      V = aggregate(target=Y, groups=A, fn="variance")
      k = nrow(N)
      B[7, p] = sqrt(1 - sum((N - 1) * V) / ((W - 1) * vy))
      B[8, p] = (sum(N * (M - mean(Y))^2) / (k - 1)) / (sum((N - 1) * V) / (W - k))
      CC[1:k, p] = N
      CM[1:k, p] = M
      CV[1:k, p] = V
    }
  }
}
write(B, $bivar.stats, format="csv")
write(CC, $category.counts, format="csv")
write(CM, $category.means, format="csv")
write(CV, $category.variances, format="csv")
"""
sys_case("app_parfor_bivariate", "applications/parfor/parfor_bivariate",
         ["{IN}", "5", "{EXP}"],
         {"D": lambda: stats_data(1000, 30, 7777),
          "S1": lambda: col_sets(10, 30, 1112),
          "S2": lambda: col_sets(10, 30, 1113),
          "K1": lambda: set_kinds(col_sets(10, 30, 1112), 30),
          "K2": lambda: set_kinds(col_sets(10, 30, 1113), 30)},
         BIVAR_DML,
         {"bivar.stats": {}, "category.counts": {}, "category.means": {},
          "category.variances": {}},
         ("parfor/parfor_bivariate1.dml",
          ["{IN}D", "{IN}S1", "{IN}S2", "{IN}K1", "{IN}K2", "{OUT}", "1000",
           "30", "10", "100", "5"]), 1e-10)


# Twins only SystemDS's own script computes: no braid builtin implements
# the algorithm, and a braid script of the same length would be a copy of
# it. rtwins.py gen writes their R numbers; appsys.py (which rtwins.py
# run calls in CI when a SystemDS mirror is there) and appdml.py run
# SystemDS's script with braid's interpreter against them; rtwins.py's own
# batch of braid's library leaves them out.
SYS_ONLY = []


def sys_only(name, r, rargs, inputs, outputs, sys, tol):
    SYS_ONLY.append(dict(name=name, r=r, rargs=rargs, inputs=inputs,
                         dml=None, outputs=outputs, tol=tol, nvargs={},
                         sys=sys))


# ID3Test: an ID3 decision tree (nodes and edges) of X round(U[1, 10])
# 100 x 50 and labels round(U[1, 10]) (also 1000 rows); eps 1e-14.
for rows in (100, 300):
    sys_only("app_id3_%d" % rows, "applications/id3/id3", ["{IN}", "{EXP}"],
             {"X": lambda rows=rows: rounded(rand(rows, 50, 1, 10, 1.0, 3)),
              "y": lambda rows=rows: rounded(rand(rows, 1, 1, 10, 1.0, 7))},
             {"nodes": {}, "edges": {}},
             ("id3/id3.dml", ["{IN}X", "{IN}y", "{OUT}nodes", "{OUT}edges"]),
             1e-14)


def mda_data(n, m, seed):
    """MDABivariateStatsTest's X: uniform [0, 1], the columns from m/2 on
    (0-based) made 5-valued categories 1..5 by fifths."""
    X = rand(n, m, 0, 1, 1.0, seed)
    return [[v if j < m // 2 else float(min(int(v / 0.2) + 1, 5))
             for j, v in enumerate(r)] for r in X]


# MDABivariateStatsTest: the label column (1, scale, or 100, categorical)
# against every other column of X 1000 x 100 (levels: 1 scale for columns
# up to m/2, else 0 categorical); only stats is compared; eps 1e-6.
for li, lvl in ((1, 1), (100, 0)):
    feats = [i for i in range(1, 101) if i != li]
    sys_only("app_MDABivariateStats_%d" % li,
             "applications/mdabivar/MDABivariateStats",
             ["{IN}", str(li), str(lvl), "{EXP}"],
             {"X": lambda: mda_data(1000, 100, 221),
              "feature_indices": lambda feats=feats: [[float(i)]
                                                      for i in feats],
              "feature_measurement_levels": lambda feats=feats: [
                  [0.0 if i > 50 else 1.0] for i in feats]},
             {"stats": {}},
             ("mdabivar/MDABivariateStats.dml",
              ["{IN}X", str(li), "{IN}feature_indices", str(lvl),
               "{IN}feature_measurement_levels"] + ["{OUT}" + o for o in (
                   "stats", "tests", "covariances", "standard_deviations",
                   "contingency_tables_counts",
                   "contingency_tables_label_values",
                   "contingency_tables_feature_values", "feature_values",
                   "feature_counts", "feature_means",
                   "feature_standard_deviations")]), 1e-6)

# ParForCVMulticlassSVMTest: 4-fold cross-validation (folds P
# round(U[0.51, 4.49])) of one-against-all L2-SVMs (3 classes, labels
# round(U[0.51, 3.49]), epsilon 1e-3, lambda 1, maxiter 100, no
# intercept) on X 1200 x 70 in [0, 1], dense and at sparsity 0.1; eps
# 1e-10. A row of zeros scores 0 for every class, and the tie goes to the
# first class in R (which.max) but to the last in SystemDS's rowIndexMax
# (braid's too): at 600 x 30 (25 such rows) the fold accuracies differ by
# up to 1.4 points; at the Java test's 1200 x 70 no row is all zero.
for sp in (1.0, 0.1):
    sys_only("app_parfor_cv_multiclasssvm_%g" % sp,
             "applications/parfor/parfor_cv_multiclasssvm",
             ["{IN}", "4", "0", "3", "0.001", "1.0", "100", "{EXP}"],
             {"X": lambda sp=sp: rand(1200, 70, 0, 1, sp, 231),
              "y": lambda: rounded(rand(1200, 1, 0.51, 3.49, 1.0, 232)),
              "P": lambda: rounded(rand(1200, 1, 0.51, 4.49, 1.0, 233))},
             {"stats": {}},
             ("parfor/parfor_cv_multiclasssvm1.dml",
              ["{IN}X", "{IN}y", "1200", "70", "4", "0", "3", "0.001", "1.0",
               "100", "{OUT}stats", "{IN}P"]), 1e-10)

# LinearLogRegTest: a trust-region Newton method for L2-regularized
# logistic regression (C = 2, 3 outer and 3 inner iterations at most, w
# from 0) on X in [1, 10] 100 x 50 at sparsity 0.01 and 0.7 with y in
# [0.01, 1], Xt and yt 25 rows (only the printed accuracy uses them);
# eps 1e-14. braid's multiLogReg is SystemDS's other trust-region method
# (another radius rule, no C), so only SystemDS's script is compared.
for sp in (0.01, 0.7):
    sys_only("app_LinearLogReg_%g" % sp,
             "applications/linearLogReg/LinearLogReg", ["{IN}", "{EXP}"],
             {"X": lambda sp=sp: rand(100, 50, 1, 10, sp, 241),
              "Xt": lambda sp=sp: rand(25, 50, 1, 10, sp, 242),
              "y": lambda: rand(100, 1, 0.01, 1, 1.0, 243),
              "yt": lambda: rand(25, 1, 0.01, 1, 1.0, 244)},
             {"w": {}},
             ("linearLogReg/LinearLogReg.dml",
              ["{IN}X", "{IN}Xt", "{IN}y", "{IN}yt", "{OUT}w"]), 1e-14)
