-- Not one of Argo CD's health statuses: Argo CD reports Unknown.
return { status = "Fine" }
