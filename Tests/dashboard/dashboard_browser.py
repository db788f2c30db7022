#!/usr/bin/env python3
"""Drives the admin dashboard in headless Chromium (Selenium), against a running rooftop-server.

Run by Tests/EndToEndTests/DashboardTests.swift, which starts the server, seeds data, watches
the edited object from a Rooftop client, and checks what this script reports.

Arguments: BASE_URL ADMIN_KEY DATASTORE_KEY CLASS OBJECT_ID SCREENSHOT_DIR
Prints one line per step ("ok: ..."); exits non-zero on the first failure.
"""
import os
import sys
import time

from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait


def main():
    base, key, datastore_key, class_name, object_id, shots = sys.argv[1:7]
    os.makedirs(shots, exist_ok=True)
    options = Options()
    options.add_argument("--headless=new")
    options.add_argument("--no-sandbox")
    options.add_argument("--disable-dev-shm-usage")
    options.add_argument("--window-size=1280,900")
    # The test server's certificate comes from a throwaway development CA.
    options.add_argument("--ignore-certificate-errors")
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    service = Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver"))
    driver = webdriver.Chrome(service=service, options=options)
    driver.set_page_load_timeout(60)
    step = 0

    def shot(name):
        nonlocal step
        step += 1
        driver.save_screenshot(os.path.join(shots, "%02d-%s.png" % (step, name)))

    def ok(message):
        print("ok: " + message, flush=True)

    def expect(condition, message):
        if not condition:
            shot("failure")
            raise AssertionError(message + " (page: " + driver.current_url + ")")

    def wait(condition, message):
        # A click returns before the next page has loaded: wait for it, with a deadline.
        try:
            WebDriverWait(driver, 20).until(condition)
        except Exception:
            expect(False, message)

    def arrived(path):
        wait(EC.url_contains(path), "reached " + path)
        wait(lambda d: d.execute_script("return document.readyState") == "complete", "loaded " + path)

    def no_alert():
        try:
            driver.switch_to.alert
            return False
        except NoAlertPresentException:
            return True

    try:
        driver.get(base + "/dashboard/overview")
        expect(driver.current_url.endswith("/dashboard/login"), "a page without a session goes to the sign-in")
        shot("login")

        driver.find_element(By.ID, "admin-key").send_keys("not the key")
        driver.find_element(By.ID, "sign-in").click()
        wait(EC.presence_of_element_located((By.ID, "error")), "an error is shown")
        expect("admin key is wrong" in driver.find_element(By.ID, "error").text, "a wrong key is refused")
        ok("a wrong key is refused")

        driver.find_element(By.ID, "admin-key").send_keys(key)
        driver.find_element(By.ID, "sign-in").click()
        arrived("/dashboard/overview")
        cookies = driver.get_cookies()
        expect(all(key not in c["value"] for c in cookies), "the key itself is not stored in a cookie")
        session = [c for c in cookies if c["name"] == "rooftop_dashboard"]
        expect(session and session[0]["httpOnly"] and session[0]["secure"], "the session cookie is HttpOnly and Secure")
        expect(session[0].get("sameSite") == "Strict", "the session cookie is SameSite=Strict")
        expect(int(driver.find_element(By.ID, "count-objects").text) >= 1, "the overview counts objects")
        shot("overview")
        ok("signed in; overview shows %s objects" % driver.find_element(By.ID, "count-objects").text)

        driver.find_element(By.LINK_TEXT, "Datastores").click()
        arrived("/dashboard/datastores")
        driver.find_element(By.LINK_TEXT, ":app").click()
        arrived("/dashboard/datastores/")
        wait(EC.presence_of_element_located((By.ID, "usage-records")), "the datastore page")
        expect(" of " in driver.find_element(By.ID, "usage-records").text, "the usage against the limits is shown")
        shot("datastore")
        driver.find_element(By.LINK_TEXT, class_name).click()
        arrived("/classes/" + class_name)
        table = driver.find_element(By.ID, "objects").text
        expect("<script>" in table, "user data is shown as text, escaped")
        expect(no_alert(), "no script from the data ran")
        expect("image/png" in table and "bytes" in table, "bytes show their size and MIME type")
        expect("_User/u1" in table, "pointers are shown")
        shot("browse")
        ok("browsed %s: values typed and escaped" % class_name)

        query = driver.find_element(By.ID, "query")
        query.clear()
        query.send_keys('where score > 5 order by score desc')
        driver.find_element(By.ID, "run-query").click()
        arrived("?q=")
        expect("1 shown of 1" in driver.find_element(By.ID, "result-count").text, "the query box filters")
        shot("query")
        ok("the query box runs the text language")

        driver.get(base + "/dashboard/datastores/%s/classes/%s/objects/%s" % (datastore_key, class_name, object_id))
        arrived("/objects/" + object_id)
        area = driver.find_element(By.CSS_SELECTOR, 'textarea[data-field="status"]')
        area.clear()
        area.send_keys('"edited in the dashboard"')
        driver.find_element(By.ID, "save").click()
        arrived("done=saved")
        expect(driver.find_element(By.ID, "notice").text == "Saved.", "the edit is saved")
        shot("edited")
        ok("edited %s/%s" % (class_name, object_id))

        driver.find_element(By.LINK_TEXT, "Users").click()
        arrived("/dashboard/users")
        driver.find_element(By.ID, "new-username").send_keys("created-in-browser")
        driver.find_element(By.ID, "new-password").send_keys("a long password")
        driver.find_element(By.ID, "create-user").click()
        arrived("done=created")
        expect(driver.find_element(By.ID, "notice").text == "Created.", "a user is created")
        shot("user")
        ok("created a user")

        driver.find_element(By.LINK_TEXT, "Roles").click()
        arrived("/dashboard/roles")
        driver.find_element(By.NAME, "name").send_keys("Moderators")
        driver.find_element(By.ID, "create-role").click()
        arrived("/dashboard/roles/Moderators")
        expect("Moderators" in driver.find_element(By.TAG_NAME, "h1").text, "a role is created")
        shot("role")
        ok("created a role")

        driver.find_element(By.ID, "sign-out").click()
        arrived("/dashboard/login")
        driver.get(base + "/dashboard/overview")
        arrived("/dashboard/login")
        expect(driver.current_url.endswith("/dashboard/login"), "after signing out the pages need a new sign-in")
        ok("signed out")
    except Exception:
        shot("failure")
        print("page at the failure: " + driver.current_url, flush=True)
        print(driver.find_element(By.TAG_NAME, "main").text[:2000], flush=True)
        raise
    finally:
        driver.quit()


if __name__ == "__main__":
    try:
        main()
    except Exception as error:  # reported to the Swift test, which fails with it
        print("failed: %s" % error, flush=True)
        sys.exit(1)
