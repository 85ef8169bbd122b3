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
