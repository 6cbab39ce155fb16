"""Shipping an agent: an OCI image built from a generated Dockerfile (`holodeck deploy
--build`), and Kubernetes or Compose manifests that run it (`holodeck deploy --emit`).

Nothing here resolves a `${VAR}`: the image and the manifests carry references that the
container's environment fills in when it runs."""
