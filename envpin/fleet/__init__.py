"""Fleets on the engines that already run them: machine classes from a cluster's own inventory (Kubernetes
node lists, Slurm nodes), and what each class needs there: Kubernetes Job manifests, Dockerfiles, sbatch
scripts, and the report of which nodes of a class verified. envpin never schedules or runs an agent itself.
"""
